/*
 * svc-test stream app (issue 37): a WebSocket echo and a server-sent-events feed in one static binary, so
 * tests can hold long-lived connections across deploys without any registry. One process per connection.
 *   GET /ws      WebSocket (RFC 6455): each text frame comes back as "<VERSION> <text>"
 *   GET /events  text/event-stream: "data: <VERSION> <n>" every 200 ms until the client goes
 *   GET <other>  200 "<VERSION>\n" (health checks, plain requests)
 * VERSION and PORT come from the environment (defaults v1, 3000). SIGTERM ends the process at once, and
 * with it (PID 1) every connection: a stream cut at a stop is seen by its client.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char *version = "v1";

/* SHA-1 (FIPS 180-1), enough for the handshake's accept key. */
static void sha1(const unsigned char *msg, size_t len, unsigned char out[20]) {
  uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  size_t total = ((len + 8) / 64 + 1) * 64;
  unsigned char *buf = calloc(total, 1);
  memcpy(buf, msg, len);
  buf[len] = 0x80;
  uint64_t bits = (uint64_t)len * 8;
  for (int i = 0; i < 8; i++) buf[total - 1 - i] = (unsigned char)(bits >> (8 * i));
  for (size_t off = 0; off < total; off += 64) {
    uint32_t w[80];
    for (int i = 0; i < 16; i++) w[i] = (uint32_t)buf[off + 4 * i] << 24 | (uint32_t)buf[off + 4 * i + 1] << 16 | (uint32_t)buf[off + 4 * i + 2] << 8 | buf[off + 4 * i + 3];
    for (int i = 16; i < 80; i++) { uint32_t x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]; w[i] = x << 1 | x >> 31; }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; i++) {
      uint32_t f, k;
      if (i < 20) { f = (b & c) | (~b & d); k = 0x5A827999; }
      else if (i < 40) { f = b ^ c ^ d; k = 0x6ED9EBA1; }
      else if (i < 60) { f = (b & c) | (b & d) | (c & d); k = 0x8F1BBCDC; }
      else { f = b ^ c ^ d; k = 0xCA62C1D6; }
      uint32_t t = (a << 5 | a >> 27) + f + e + k + w[i];
      e = d; d = c; c = b << 30 | b >> 2; b = a; a = t;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e;
  }
  free(buf);
  for (int i = 0; i < 5; i++) for (int j = 0; j < 4; j++) out[4 * i + j] = (unsigned char)(h[i] >> (24 - 8 * j));
}

static void base64(const unsigned char *in, size_t len, char *out) {
  static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t o = 0;
  for (size_t i = 0; i < len; i += 3) {
    uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < len ? (uint32_t)in[i + 1] << 8 : 0) | (i + 2 < len ? in[i + 2] : 0);
    out[o++] = t[v >> 18 & 63];
    out[o++] = t[v >> 12 & 63];
    out[o++] = i + 1 < len ? t[v >> 6 & 63] : '=';
    out[o++] = i + 2 < len ? t[v & 63] : '=';
  }
  out[o] = 0;
}

static int write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n > 0) { ssize_t w = write(fd, c, n); if (w <= 0) return -1; c += w; n -= (size_t)w; }
  return 0;
}

static int read_full(int fd, unsigned char *p, size_t n) {
  while (n > 0) { ssize_t r = read(fd, p, n); if (r <= 0) return -1; p += r; n -= (size_t)r; }
  return 0;
}

/* A header's value in the request head (case-insensitive name), copied into out. */
static int header(const char *head, const char *name, char *out, size_t cap) {
  size_t nl = strlen(name);
  for (const char *line = strstr(head, "\r\n"); line; line = strstr(line + 2, "\r\n")) {
    const char *l = line + 2;
    if (strncasecmp(l, name, nl) == 0 && l[nl] == ':') {
      l += nl + 1;
      while (*l == ' ') l++;
      size_t i = 0;
      while (l[i] && l[i] != '\r' && i + 1 < cap) { out[i] = l[i]; i++; }
      out[i] = 0;
      return 1;
    }
  }
  return 0;
}

static void websocket(int fd, const char *head) {
  char key[128], accept_src[200], accept[64];
  unsigned char digest[20];
  if (!header(head, "Sec-WebSocket-Key", key, sizeof key)) return;
  snprintf(accept_src, sizeof accept_src, "%s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", key);
  sha1((unsigned char *)accept_src, strlen(accept_src), digest);
  base64(digest, 20, accept);
  char resp[256];
  int n = snprintf(resp, sizeof resp, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", accept);
  if (write_all(fd, resp, (size_t)n) < 0) return;
  for (;;) {
    unsigned char h2[2], mask[4], ext[8];
    if (read_full(fd, h2, 2) < 0) return;
    int op = h2[0] & 15;
    uint64_t len = h2[1] & 127;
    if (len == 126) { if (read_full(fd, ext, 2) < 0) return; len = (uint64_t)ext[0] << 8 | ext[1]; }
    else if (len == 127) { if (read_full(fd, ext, 8) < 0) return; len = 0; for (int i = 0; i < 8; i++) len = len << 8 | ext[i]; }
    if (len > 65536) return;
    if ((h2[1] & 128) && read_full(fd, mask, 4) < 0) return;
    unsigned char payload[65536 + 64];
    if (len && read_full(fd, payload, (size_t)len) < 0) return;
    if (h2[1] & 128) for (uint64_t i = 0; i < len; i++) payload[i] ^= mask[i % 4];
    if (op == 8) { unsigned char close[2] = {0x88, 0}; write_all(fd, close, 2); return; }
    if (op == 9) { unsigned char pong[2] = {0x8A, 0}; write_all(fd, pong, 2); continue; }
    if (op != 1) continue;
    unsigned char out[65536 + 128];
    size_t vlen = strlen(version), body = vlen + 1 + (size_t)len, o = 0;
    out[o++] = 0x81;
    if (body < 126) out[o++] = (unsigned char)body;
    else { out[o++] = 126; out[o++] = (unsigned char)(body >> 8); out[o++] = (unsigned char)body; }
    memcpy(out + o, version, vlen); o += vlen;
    out[o++] = ' ';
    memcpy(out + o, payload, (size_t)len); o += (size_t)len;
    if (write_all(fd, out, o) < 0) return;
  }
}

static void events(int fd) {
  const char *head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\r\n";
  if (write_all(fd, head, strlen(head)) < 0) return;
  struct timespec pause = {0, 200 * 1000 * 1000};
  for (unsigned long n = 0;; n++) {
    char line[128];
    int len = snprintf(line, sizeof line, "data: %s %lu\n\n", version, n);
    if (write_all(fd, line, (size_t)len) < 0) return;
    nanosleep(&pause, NULL);
  }
}

static void serve(int fd) {
  char head[8192];
  size_t got = 0;
  while (got < sizeof head - 1) {
    ssize_t r = read(fd, head + got, sizeof head - 1 - got);
    if (r <= 0) return;
    got += (size_t)r;
    head[got] = 0;
    if (strstr(head, "\r\n\r\n")) break;
  }
  if (strncmp(head, "GET /ws", 7) == 0) return websocket(fd, head);
  if (strncmp(head, "GET /events", 11) == 0) return events(fd);
  char resp[256];
  int n = snprintf(resp, sizeof resp, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s\n", strlen(version) + 1, version);
  write_all(fd, resp, (size_t)n);
}

static void stop(int sig) { (void)sig; _exit(0); }

int main(void) {
  if (getenv("VERSION")) version = getenv("VERSION");
  int port = getenv("PORT") ? atoi(getenv("PORT")) : 3000;
  signal(SIGTERM, stop); /* PID 1 ignores SIGTERM without a handler */
  signal(SIGINT, stop);
  signal(SIGCHLD, SIG_IGN); /* children reaped by the kernel */
  signal(SIGPIPE, SIG_IGN);
  int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  if (bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 512) < 0) { perror("listen"); return 1; }
  printf("svc-test stream %s listening on port %d\n", version, port);
  fflush(stdout);
  for (;;) {
    int c = accept(s, NULL, NULL);
    if (c < 0) continue;
    pid_t pid = fork();
    if (pid == 0) {
      signal(SIGTERM, SIG_DFL);
      close(s);
      serve(c);
      _exit(0);
    }
    close(c);
  }
}
