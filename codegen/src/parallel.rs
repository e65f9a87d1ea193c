//! Running independent work items on every core, keeping results in input order.

/// Applies `work` to every item on up to one thread per core (at most 8), returning the results
/// in the items' order. A panic in `work` is propagated.
///
/// ```
/// let squares = smithy_tls_codegen::parallel::map_in_order(&[1, 2, 3], |n| n * n);
/// assert_eq!(squares, [1, 4, 9]);
/// ```
pub fn map_in_order<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8);
    let chunk = items.len().div_ceil(workers).max(1);
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> =
            items.chunks(chunk).map(|batch| scope.spawn(move || batch.iter().map(work).collect::<Vec<R>>())).collect();
        handles
            .into_iter()
            .flat_map(|h| match h.join() {
                Ok(results) => results,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    })
}
