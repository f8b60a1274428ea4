'use strict';
// See package.json: ssh:// DOCKER_HOST is not supported by svc; use the local socket or tcp://.
class Client {
  constructor() {
    throw new Error('ssh:// DOCKER_HOST is not supported by svc; use unix:///var/run/docker.sock or tcp://host:port');
  }
}
module.exports = { Client };
