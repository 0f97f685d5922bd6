/**
 * The environment for a command that downloads (npm install): the machine's extra CA bundle, which
 * vitest.config.ts sets aside for every other process of the suite, put back.
 */
export function networkEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const bundle = env.COACHGATE_TEST_EXTRA_CA_CERTS;
  return bundle ? { ...env, NODE_EXTRA_CA_CERTS: bundle } : env;
}
