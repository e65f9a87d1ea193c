// The compare benchmark's Go net/http server: stock HTTP/1.1 and HTTP/2 settings, TLS 1.3 with
// the certificate and key the benchmark wrote, on 127.0.0.1 only.
//
// It serves what the benchmark's own server serves: `GET /obj/<n>` answers n bytes (Range
// honoured), and a POST or PUT is read to its end before the same answer (`/obj/0`: empty).
// It prints `SERVE h1=<addr> h2=<addr> plain=<addr> full=<addr>` and serves until its standard
// input closes; `full` is HTTP/1.1-only and never resumes a session (no session tickets).
//
// Built by the benchmark with `go build` (standard library only) into the target directory.
package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// block holds the repeating pattern (period 251) every body is copied from.
var block = func() []byte {
	b := make([]byte, 251*1024)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}()

// pattern is a read-only, seekable body of n bytes, copied from block.
type pattern struct {
	size, offset int64
}

func (p *pattern) Read(b []byte) (int, error) {
	if p.offset >= p.size {
		return 0, io.EOF
	}
	if rest := p.size - p.offset; int64(len(b)) > rest {
		b = b[:rest]
	}
	n := copy(b, block[p.offset%251:])
	p.offset += int64(n)
	return n, nil
}

func (p *pattern) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
		p.offset = offset
	case io.SeekCurrent:
		p.offset += offset
	case io.SeekEnd:
		p.offset = p.size + offset
	}
	if p.offset < 0 {
		return 0, errors.New("negative offset")
	}
	return p.offset, nil
}

func handle(w http.ResponseWriter, r *http.Request) {
	size, err := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/obj/"), 10, 64)
	if err != nil || !strings.HasPrefix(r.URL.Path, "/obj/") {
		http.NotFound(w, r)
		return
	}
	if r.Method == http.MethodPost || r.Method == http.MethodPut {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Header.Del("Range")
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	http.ServeContent(w, r, "", time.Time{}, &pattern{size: size})
}

func listen() net.Listener {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		os.Exit(1)
	}
	return l
}

func main() {
	certFile := flag.String("cert", "", "certificate chain, PEM")
	keyFile := flag.String("key", "", "private key, PEM")
	flag.Parse()
	cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "certificate:", err)
		os.Exit(1)
	}
	mux := http.HandlerFunc(handle)
	config := func() *tls.Config {
		return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	}
	// A non-nil, empty TLSNextProto turns HTTP/2 off: the HTTP/1.1-only port.
	h1 := &http.Server{Handler: mux, TLSConfig: config(), TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){}}
	h2 := &http.Server{Handler: mux, TLSConfig: config()}
	plain := &http.Server{Handler: mux}
	noTickets := config()
	noTickets.SessionTicketsDisabled = true
	full := &http.Server{Handler: mux, TLSConfig: noTickets, TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){}}
	l1, l2, lp, lf := listen(), listen(), listen(), listen()
	go h1.ServeTLS(l1, "", "")
	go h2.ServeTLS(l2, "", "")
	go plain.Serve(lp)
	go full.ServeTLS(lf, "", "")
	fmt.Printf("SERVE h1=%s h2=%s plain=%s full=%s\n", l1.Addr(), l2.Addr(), lp.Addr(), lf.Addr())
	io.Copy(io.Discard, os.Stdin)
}
