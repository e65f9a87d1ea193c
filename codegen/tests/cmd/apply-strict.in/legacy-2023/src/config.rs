/// Old-style config: no runtime plugins.
pub struct Config {
    pub(crate) make_token: u32,
}
