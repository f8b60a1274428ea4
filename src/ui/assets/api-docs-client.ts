// The script of /docs/api: renders the API's own OpenAPI document with Scalar's standalone bundle (served
// by the daemon, src/ui/assets.ts). No fonts, proxy or telemetry from elsewhere: svc runs offline.
export const API_DOCS_CLIENT = `
(function () {
  var el = document.getElementById('api-reference');
  if (!el || !window.Scalar) return;
  window.Scalar.createApiReference(el, {
    url: el.getAttribute('data-url'),
    withDefaultFonts: false,
    hideClientButton: true,
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: 'never',
    defaultOpenAllTags: false,
    metaData: { title: 'svc API reference' },
  });
  var note = document.getElementById('api-reference-loading');
  if (note) note.remove();
})();
`;
