/** @jsxImportSource hono/jsx */
// `/nodes` (issue 19): the machines apps run on, each with its state (a node that went down shows as
// `down`), availability, resources and this instance's replicas on it; "Drain" and "Activate" per node and
// the `docker swarm join` command for a new machine. Over src/cluster/nodes.ts, like the API.
import { Hono, type Context } from 'hono';
import { listNodes, type NodeJson } from '../cluster/nodes.js';
import { joinCommand, nodeEvents, updateNode } from '../desired/nodes.js';
import { DomainError } from '../errors.js';
import { done, flash, readForm, render, type UiDeps, type UiEnv, may } from './context.js';
import { Layout, PostButton } from './layout.js';
import { nodeEventJson } from '../presenters/nodes.js';

export function nodesPage(deps: UiDeps) {
  const r = new Hono<UiEnv>();

  const page = async (c: Context<UiEnv>, o: { error?: string; join?: string; status?: 200 | 409 | 503 } = {}) => {
    let nodes: NodeJson[] = [];
    let error = o.error;
    try {
      if (deps.runtime) nodes = await listNodes(deps.runtime, deps.db);
      else error ??= 'The container engine is not available.';
    } catch (err) {
      error ??= `The engine did not answer: ${(err as Error).message}`;
    }
    const single = nodes.length === 1 && nodes[0]!.address === '';
    const history = nodeEvents(deps.db, '20');
    return render(
      c,
      <Layout title="Nodes" csrf={c.var.csrf} user={c.var.user} message={flash(c)} error={error}>
        <p>
          {single
            ? 'svc drives one Docker engine (SVC_RUNTIME=docker). To run apps on more machines, make this host a Swarm manager and start svc with SVC_RUNTIME=swarm (see the README).'
            : 'The machines of the Swarm. A drained node runs no replicas: svc starts them on the other nodes.'}
        </p>
        <table>
          <thead>
            <tr>
              <th scope="col">Host name</th>
              <th scope="col">Address</th>
              <th scope="col">Role</th>
              <th scope="col">State</th>
              <th scope="col">Availability</th>
              <th scope="col">Resources</th>
              <th scope="col">Replicas</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {nodes.map((n) => (
              <tr>
                <td>
                  {n.hostname}
                  <br />
                  <span class="muted">{n.id.slice(0, 12)}</span>
                </td>
                <td>{n.address || '-'}</td>
                <td>{n.role + (n.leader ? ' (leader)' : '')}</td>
                <td>
                  {n.state === 'ready' ? 'ready' : <strong>{n.state}</strong>}
                  {n.down_since && (
                    <>
                      <br />
                      <span class="muted">down since {n.down_since.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}</span>
                    </>
                  )}
                </td>
                <td>{n.availability}</td>
                <td>
                  {n.cpus} CPUs, {n.memory_mb} MiB
                  {Object.keys(n.labels).length > 0 && (
                    <>
                      <br />
                      <span class="muted">{Object.entries(n.labels).map(([k, v]) => `${k}=${v}`).join(' ')}</span>
                    </>
                  )}
                </td>
                <td>{n.replicas.map((x) => x.app ?? x.service ?? x.container).join(', ') || '-'}</td>
                <td>
                  {!single &&
                    may(c, 'POST /nodes/:id/drain') &&
                    (n.availability === 'active' ? (
                      <PostButton action={`/nodes/${encodeURIComponent(n.id)}/drain`} csrf={c.var.csrf} label="Drain" context={n.hostname} tone="secondary" small />
                    ) : (
                      <PostButton action={`/nodes/${encodeURIComponent(n.id)}/activate`} csrf={c.var.csrf} label="Activate" context={n.hostname} small />
                    ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {history.length > 0 && (
          <section aria-labelledby="h-node-events">
            <h2 id="h-node-events">Recent node events</h2>
            <ul>
              {history.map(nodeEventJson).map((e) => (
                <li>
                  {e.at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}: {e.hostname} {e.kind === 'down' ? `went ${e.state}` : 'is ready again'}
                </li>
              ))}
            </ul>
          </section>
        )}
        {!single && may(c, 'POST /nodes/join') && (
          <section aria-labelledby="h-join">
            <h2 id="h-join">Add a machine</h2>
            {o.join ? (
              <p>
                Run this on the new machine (Docker installed): <code>{o.join}</code>
              </p>
            ) : (
              <PostButton action="/nodes/join" csrf={c.var.csrf} label="Show the join command" />
            )}
          </section>
        )}
      </Layout>,
      o.status ?? 200,
    );
  };

  r.get('/nodes', (c) => page(c));

  r.post('/nodes/join', async (c) => {
    await readForm(c, deps);
    try {
      if (!deps.runtime) throw new Error('the container engine is not available');
      return page(c, { join: (await joinCommand(deps.runtime, {})).command_line });
    } catch (err) {
      return page(c, { error: (err as Error).message, status: err instanceof DomainError ? 409 : 503 });
    }
  });

  for (const [action, availability] of [['drain', 'drain'], ['activate', 'active']] as const) {
    r.post(`/nodes/:id/${action}`, async (c) => {
      await readForm(c, deps);
      try {
        if (!deps.runtime) throw new Error('the container engine is not available');
        await updateNode(deps.runtime, c.req.param('id'), { availability }, { db: deps.db, enqueue: deps.enqueue, bus: deps.bus, signal: c.req.raw.signal });
      } catch (err) {
        return page(c, { error: (err as Error).message, status: err instanceof DomainError ? 409 : 503 });
      }
      return done(c, '/nodes');
    });
  }
  return r;
}
