// The UI's one stylesheet: system fonts, no images, readable on a phone (tables scroll sideways, forms
// stack), visible focus for keyboard users, and status colours that always come with the status word.
export const STYLE = `
:root{--fg:#1b1f24;--muted:#5b6470;--bg:#fff;--panel:#f5f7f9;--line:#d6dbe1;--accent:#1f5fbf;--ok:#126b2f;--okbg:#e3f4e8;--bad:#a3161a;--badbg:#fde8e8;--warn:#7a4d00;--warnbg:#fff3d6;--idle:#4a5360;--idlebg:#eceff3}
@media (prefers-color-scheme:dark){:root{--fg:#e6e9ed;--muted:#9aa4b0;--bg:#12161b;--panel:#1b2128;--line:#323b46;--accent:#7fb0ff;--ok:#7fe0a0;--okbg:#163222;--bad:#ff9a9a;--badbg:#3a1618;--warn:#ffd27a;--warnbg:#3a2d10;--idle:#c2cad4;--idlebg:#262d36}}
*{box-sizing:border-box}
html{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
body{margin:0}
a{color:var(--accent)}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,summary:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
header.top{display:flex;flex-wrap:wrap;gap:.5rem 1.25rem;align-items:center;padding:.6rem 1rem;border-bottom:1px solid var(--line);background:var(--panel)}
header.top .brand{font-weight:700;font-size:1.15rem;text-decoration:none;color:var(--fg)}
header.top nav ul{display:flex;flex-wrap:wrap;gap:.25rem 1rem;list-style:none;margin:0;padding:0}
header.top form{margin-left:auto}
main{max-width:72rem;margin:0 auto;padding:1rem}
h1{font-size:1.6rem;margin:.5rem 0 1rem}
h2{font-size:1.2rem;margin:1.75rem 0 .6rem;padding-bottom:.25rem;border-bottom:1px solid var(--line)}
h3{font-size:1rem;margin:1rem 0 .4rem}
.muted{color:var(--muted)}
.status-line.warn{color:var(--warn)}
.narrow{max-width:26rem}
table{border-collapse:collapse;width:100%;font-size:.95rem}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:600;color:var(--muted);font-size:.85rem;text-transform:uppercase;letter-spacing:.03em}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em;word-break:break-all}
.app-head{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:end;justify-content:space-between;margin-bottom:.75rem}
.app-head p{margin:.15rem 0}
nav.tabs ul{display:flex;flex-wrap:wrap;gap:.25rem;list-style:none;margin:0 0 1rem;padding:0;border-bottom:1px solid var(--line)}
nav.tabs a{display:block;padding:.4rem .75rem;text-decoration:none;border:1px solid transparent;border-bottom:0;border-radius:6px 6px 0 0;margin-bottom:-1px}
nav.tabs a[aria-current=page]{color:var(--fg);font-weight:600;background:var(--bg);border-color:var(--line)}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem;margin:0}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0;min-width:0;overflow-wrap:anywhere}
ol.steps{padding-left:1.4rem}ol.steps li.done{color:var(--muted)}ol.steps li.current{font-weight:600}ol.steps li.todo{color:var(--muted);opacity:.7}
form{margin:0}
.stack{display:grid;gap:.75rem;max-width:36rem}
.stack.wide{max-width:60rem}
.row{display:flex;flex-wrap:wrap;gap:.5rem .75rem;align-items:end}
label{display:block;font-weight:600;font-size:.9rem}
label.check{display:flex;gap:.4rem;align-items:center;font-weight:400}
input,select{font:inherit;font-weight:400;color:inherit;background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:.45rem .55rem;min-height:2.5rem;width:100%}
input[type=checkbox]{width:1.2rem;min-height:1.2rem;margin:0}
.row label,.row .field{flex:1 1 10rem}
.field select{width:100%}
.field .hint{display:block;margin-top:-.1rem}
.row label.check{flex:0 0 auto}
.grow{flex:1 1 24rem}
.hint{font-weight:400;color:var(--muted);font-size:.85rem}
.field-error{display:block;color:var(--bad);font-size:.85rem;margin-top:.2rem}
[aria-invalid=true]{border-color:var(--bad)}
textarea{font:inherit;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;color:inherit;background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:.45rem .55rem;width:100%;min-height:4.5rem}
button,.button{font:inherit;font-weight:600;cursor:pointer;border:1px solid var(--accent);background:var(--accent);color:#fff;border-radius:6px;padding:.45rem .9rem;min-height:2.5rem;text-decoration:none;display:inline-block}
@media (prefers-color-scheme:dark){button,.button{color:#0d1117}}
button.secondary,.button.secondary{background:transparent;color:var(--accent)}
button.danger{background:var(--bad);border-color:var(--bad);color:#fff}
button.small{padding:.2rem .6rem;min-height:2rem;font-size:.85rem}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.actions form{display:inline}
.spaced{margin-top:1rem}
.badge{display:inline-block;border-radius:999px;padding:.05rem .6rem;font-size:.85rem;font-weight:600;border:1px solid currentColor;white-space:nowrap}
.badge::before{content:"";display:inline-block;width:.55rem;height:.55rem;border-radius:50%;background:currentColor;margin-right:.35rem;vertical-align:.05rem}
.s-ok{color:var(--ok);background:var(--okbg)}
.s-bad{color:var(--bad);background:var(--badbg)}
.s-warn{color:var(--warn);background:var(--warnbg)}
.s-idle{color:var(--idle);background:var(--idlebg)}
.notice{border-radius:6px;padding:.6rem .8rem;margin:0 0 1rem;border:1px solid}
.notice.error{color:var(--bad);background:var(--badbg)}
.notice.ok{color:var(--ok);background:var(--okbg)}
.notice.info{color:var(--warn);background:var(--warnbg)}
.required-empty{color:var(--bad)}
.panel{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:.75rem 1rem;margin:.5rem 0}
.grid2{display:grid;gap:1rem;grid-template-columns:repeat(auto-fit,minmax(min(100%,22rem),1fr))}
ol.events{list-style:none;margin:0;padding:0;font-size:.9rem}
ol.events li{display:grid;grid-template-columns:6.5rem 7.5rem 1fr;gap:.5rem;padding:.2rem 0;border-bottom:1px dotted var(--line)}
ol.events li.l-error{color:var(--bad)}
ol.events li.l-warn{color:var(--warn)}
@media (max-width:40rem){ol.events li{grid-template-columns:auto 1fr}ol.events li>span:last-child{grid-column:1/-1}}
pre.logs{background:#0d1117;color:#d1d7e0;border-radius:8px;padding:.6rem .8rem;min-height:8rem;max-height:24rem;overflow:auto;white-space:pre-wrap;margin:0}
pre.logs .stderr{color:inherit}
pre.logs.whole{max-height:none}
.secret{letter-spacing:.1em}
.token{display:block;padding:.5rem;background:var(--panel);border:1px dashed var(--line);border-radius:6px;user-select:all}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
footer{max-width:72rem;margin:2rem auto 1rem;padding:0 1rem;color:var(--muted);font-size:.85rem}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(18rem,1fr));gap:1rem}
.chart{margin:0;padding:.5rem;background:var(--panel);border:1px solid var(--line);border-radius:6px}
.chart svg{display:block;width:100%;height:7rem}
.chart .axis{stroke:var(--line);stroke-width:1}
.chart .limit{stroke:var(--bad);stroke-width:1;stroke-dasharray:4 4;vector-effect:non-scaling-stroke}
.chart .line{stroke-width:2;vector-effect:non-scaling-stroke}
.chart .s1{stroke:var(--accent)}
.chart .s2{stroke:var(--ok)}
.chart .s3{stroke:var(--warn)}
.chart .s4{stroke:var(--bad)}
.chart .s5{stroke:#8250df}
.chart .s6{stroke:#bf8700}
.terminal{height:28rem;padding:.25rem;background:#000;border-radius:6px}
`;
