'use strict';
// See package.json: BuildKit sessions (dockerode `buildImage` with `version: '2'`) are not used by svc.
const unsupported = () => {
  throw new Error('BuildKit sessions are not supported by svc');
};
module.exports = new Proxy({}, { get: (_, name) => (name === '__esModule' ? false : unsupported) });
