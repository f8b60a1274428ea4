// The node reconciler's decision: a node's latest change is applied once (its generation newer than the one
// settled), with only the fields the request gave.
import { describe, expect, it } from 'vitest';
import { dueNodeChange } from '../../../src/reconcilers/nodes/plan.js';
import type { NodeSpecRow } from '../../../src/store/schema/index.js';

const spec = (over: Partial<NodeSpecRow> = {}): NodeSpecRow => ({ nodeRef: 'w1', availability: null, labels: null, generation: 1, updatedAt: 'x', ...over });

describe('dueNodeChange', () => {
  it.each([
    ['no request', undefined, undefined, undefined],
    ['labels asked, never settled', spec({ labels: { zone: 'a' } }), undefined, { labels: { zone: 'a' } }],
    ['availability asked, an older one settled', spec({ availability: 'drain', generation: 3 }), { generation: 2 }, { availability: 'drain' }],
    ['both fields', spec({ availability: 'pause', labels: {} }), undefined, { availability: 'pause', labels: {} }],
    ['already settled', spec({ labels: { zone: 'a' }, generation: 2 }), { generation: 2 }, undefined],
  ] as const)('%s', (_n, s, settled, want) => {
    expect(dueNodeChange(s as NodeSpecRow | undefined, settled)).toEqual(want);
  });
});
