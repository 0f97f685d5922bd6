// The machine's site-packages carry third-party pytest plugins (hypothesis, pytest-benchmark) that
// pytest autoloads on every start: about 1.1 s each time, for plugins no test project here uses. The
// server passes its environment to every run, so this reaches the runs of in-process and HTTP servers
// (a stdio server gets the SDK's default environment, as a host gives it); a test about entry-point
// plugin loading deletes it for its own runs.
process.env.PYTEST_DISABLE_PLUGIN_AUTOLOAD = '1';
