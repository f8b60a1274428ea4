// The Content-Security-Policy of the UI's pages: scripts and styles only from us, no framing, forms only to
// us and the code host. The terminal page alone allows inline styles (xterm.js adds <style> elements).
export function contentSecurityPolicy(codehostWebUrl: string, o: { inlineStyles?: boolean } = {}): string {
  const formTargets = `'self' ${new URL(codehostWebUrl).origin}`;
  const styles = o.inlineStyles ? "'self' 'unsafe-inline'" : "'self'";
  return `default-src 'self'; script-src 'self'; style-src ${styles}; img-src 'self' data:; connect-src 'self'; form-action ${formTargets}; frame-ancestors 'none'; base-uri 'none'`;
}
