/** @jsxImportSource hono/jsx */
// The page frame and the small pieces every page uses: navigation with "Log out", the confirmation and
// error boxes (role="status" / role="alert"), status badges that say the status in words, and labelled
// form fields. Each page is a function of plain data, so rendering is cheap and testable.
import type { Child, FC } from 'hono/jsx';
import { ASSETS } from './assets.js';
import { CSRF_FIELD } from './csrf.js';
import type { Notice } from './outcome.js';

export interface PageProps {
  title: string;
  csrf: string;
  /** Logged-in user: shows the navigation and "Log out". */
  user?: { username: string };
  /** A confirmation, or an outcome (ui/outcome.ts) whose tone says whether it went well. */
  message?: string | Notice;
  error?: string;
  /** Seconds between refreshes of the page's `data-live` parts by the script; 0 or absent: none. */
  refresh?: number;
  /** Extra stylesheets and scripts of one page (the terminal's xterm.js). */
  head?: Child;
  children?: Child;
}

const NAV = [
  ['/', 'Apps'],
  ['/stacks', 'Stacks'],
  ['/services', 'Services'],
  ['/backups', 'Backups'],
  ['/nodes', 'Nodes'],
  ['/users', 'Users'],
  ['/audit', 'Audit'],
  ['/settings', 'Settings'],
  ['/account', 'Account'],
] as const;

export const Layout: FC<PageProps> = (p) => (
  <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{p.title} · svc</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href={ASSETS.style.path} />
        <script src={ASSETS.script.path} defer></script>
        {p.head}
      </head>
      <body data-refresh={p.refresh ? String(p.refresh) : undefined}>
        <header class="top">
          <a class="brand" href="/">svc</a>
          {p.user && (
            <>
              <nav aria-label="Main">
                <ul>
                  {NAV.map(([href, label]) => (
                    <li>
                      <a href={href}>{label}</a>
                    </li>
                  ))}
                </ul>
              </nav>
              <form method="post" action="/logout">
                <Csrf token={p.csrf} />
                <span class="muted">{p.user.username} </span>
                <button type="submit" class="secondary small">Log out</button>
              </form>
            </>
          )}
        </header>
        <main>
          <h1>{p.title}</h1>
          {p.error && (
            <p class="notice error" role="alert">
              {p.error}
            </p>
          )}
          {p.message && (
            // `data-live`: a refresh of the page replaces it, so "queued" gives way to the outcome.
            <p id="flash" data-live class={`notice ${typeof p.message === 'string' ? 'ok' : p.message.tone}`} role="status">
              {typeof p.message === 'string' ? p.message : p.message.text}
            </p>
          )}
          {p.children}
        </main>
        <footer>svc · self-hosted apps, deploys, services and backups</footer>
      </body>
  </html>
);

export const Csrf: FC<{ token: string }> = ({ token }) => <input type="hidden" name={CSRF_FIELD} value={token} />;

const TONE: Record<string, string> = {
  active: 's-ok', success: 's-ok', completed: 's-ok',
  error: 's-bad', failed: 's-bad', auto_rollback: 's-bad',
  pending: 's-warn', running: 's-warn', provisioning: 's-warn',
};

/** A status as a word with a colour; `deploy` ties it to a deploy for live updates. */
export const Badge: FC<{ status: string; deploy?: number }> = ({ status, deploy }) => (
  <span class={`badge ${TONE[status] ?? 's-idle'}`} data-deploy-status={deploy === undefined ? undefined : String(deploy)}>
    {status}
  </span>
);

/** A labelled input; the label text is the control's accessible name (API.md "Web UI" names them). */
export const Field: FC<{
  label: string;
  name: string;
  value?: string | number | null;
  type?: string;
  hint?: string;
  required?: boolean;
  placeholder?: string;
  autocomplete?: string;
  inputmode?: 'numeric' | 'text' | 'url';
  /** A refusal of this field, said under it (and tied to the input for screen readers). */
  error?: string;
  /** The job editor's schedule: where the page's script fetches the next runs from. */
  'data-next-runs'?: string;
}> = (p) => {
  // The label holds only the contract's name; a hint is the input's description, beside it.
  const id = fieldId(p.name, p.label);
  return (
    <div class="field">
      <label for={id}>{p.label}</label>
      {p.hint && (
        <span class="hint" id={`${id}-hint`}>
          {p.hint}
        </span>
      )}
      <input
        id={id}
        aria-describedby={describedBy(id, p)}
        aria-invalid={p.error ? 'true' : undefined}
        name={p.name}
        type={p.type ?? 'text'}
        value={p.value === null || p.value === undefined ? undefined : String(p.value)}
        required={p.required}
        placeholder={p.placeholder}
        autocomplete={p.autocomplete}
        inputmode={p.inputmode}
        data-next-runs={p['data-next-runs']}
      />
      <FieldError id={id} error={p.error} />
    </div>
  );
};

const fieldId = (name: string, label: string) => `f-${name}-${label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
const describedBy = (id: string, p: { hint?: string; error?: string }) =>
  [p.hint && `${id}-hint`, p.error && `${id}-error`].filter(Boolean).join(' ') || undefined;

/** The sentence under a refused field. */
const FieldError: FC<{ id: string; error?: string }> = ({ id, error }) =>
  error ? (
    <span class="field-error" id={`${id}-error`}>
      {error}
    </span>
  ) : null;

export const Select: FC<{ label: string; name: string; value?: string | null; options: readonly (readonly [string, string])[]; hint?: string; error?: string }> = (p) => {
  const id = fieldId(p.name, p.label);
  return (
    <div class="field">
      <label for={id}>{p.label}</label>
      {p.hint && (
        <span class="hint" id={`${id}-hint`}>
          {p.hint}
        </span>
      )}
      <select id={id} name={p.name} aria-describedby={describedBy(id, p)} aria-invalid={p.error ? 'true' : undefined}>
        {p.options.map(([v, text]) => (
          <option value={v} selected={v === p.value}>
            {text}
          </option>
        ))}
      </select>
      <FieldError id={id} error={p.error} />
    </div>
  );
};

export const Check: FC<{ label: string; name: string; checked?: boolean }> = (p) => (
  <label class="check">
    <input type="checkbox" name={p.name} checked={p.checked} />
    {p.label}
  </label>
);

/** A one-button POST form (every state change is a POST with the CSRF token). */
export const PostButton: FC<{ action: string; csrf: string; label: string; context?: string; tone?: 'danger' | 'secondary'; small?: boolean; children?: Child }> = (p) => (
  <form method="post" action={p.action}>
    <Csrf token={p.csrf} />
    {p.children}
    <button type="submit" class={[p.tone, p.small && 'small'].filter(Boolean).join(' ') || undefined}>
      {p.label}
      {p.context && <span class="sr"> {p.context}</span>}
    </button>
  </form>
);

/** A timestamp shown as UTC date and time, machine-readable in `datetime`. */
/**
 * A list as a table: it scrolls sideways on a small screen, its caption is for screen readers, and with no
 * rows it says `empty` in one row across every column.
 */
export const ListTable: FC<{ caption: string; columns: readonly string[]; empty: Child; rows: Child[]; spaced?: boolean }> = (p) => (
  <div class={p.spaced ? 'scroll spaced' : 'scroll'}>
    <table>
      <caption class="sr">{p.caption}</caption>
      <thead>
        <tr>
          {p.columns.map((c) => (
            <th scope="col">{c}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {p.rows.length === 0 ? (
          <tr>
            <td colspan={p.columns.length} class="muted">
              {p.empty}
            </td>
          </tr>
        ) : (
          p.rows
        )}
      </tbody>
    </table>
  </div>
);

export const Time: FC<{ at: string | null | undefined }> = ({ at }) =>
  at ? <time datetime={at}>{at.replace('T', ' ').replace('Z', '')}</time> : <span class="muted">-</span>;
