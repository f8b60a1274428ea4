// Stacks (issue 32): the reads of stacks, their variables and service apps, and the two record tables a
// stack deploy writes: `stack_deploys` (started by the stack command, advanced by the stack reconciler) and
// `stack_events`. The stack rows and variables themselves are written by src/desired/stacks.ts only.
import { and, asc, desc, eq, inArray } from 'drizzle-orm';
import type { Sealer } from '../crypto.js';
import type { Db } from './db.js';
import { apps, nowIso, stackDeploys, stackEvents, stacks, stackVars, type EventLevel, type StackDeployRow, type StackDeployStep, type StackRow, type StackVarRow } from './schema/index.js';

export const getStack = (db: Db, id: number): StackRow | undefined => db.select().from(stacks).where(eq(stacks.id, id)).get();
export const getStackByName = (db: Db, name: string): StackRow | undefined => db.select().from(stacks).where(eq(stacks.name, name)).get();
export const listStacks = (db: Db): StackRow[] => db.select().from(stacks).orderBy(asc(stacks.name)).all();

/** The app rows of a stack's services, by name. */
export const stackApps = (db: Db, stackId: number) => db.select().from(apps).where(eq(apps.stackId, stackId)).orderBy(asc(apps.name)).all();

export const listStackVars = (db: Db, stackId: number): StackVarRow[] =>
  db.select().from(stackVars).where(eq(stackVars.stackId, stackId)).orderBy(asc(stackVars.key)).all();

/** The plaintext of a variable. Callers must never log it. */
export const stackVarValue = (sealer: Sealer, row: StackVarRow): string =>
  row.isSecret ? (row.secretSealed ? sealer.open(row.secretSealed) : '') : (row.value ?? '');

/** Every variable decrypted (for interpolation), and the secret values (never shown in a plan or event). */
export function resolveStackVars(db: Db, sealer: Sealer, stackId: number): { values: Record<string, string>; secrets: string[]; missing: string[] } {
  const values: Record<string, string> = {};
  const secrets: string[] = [];
  const missing: string[] = [];
  for (const row of listStackVars(db, stackId)) {
    const v = stackVarValue(sealer, row);
    values[row.key] = v;
    if (row.isSecret && v !== '') secrets.push(v);
    if (row.required && v === '') missing.push(row.key);
  }
  return { values, secrets, missing };
}

// --- stack deploys (record) ---

export const getStackDeploy = (db: Db, id: number): StackDeployRow | undefined => db.select().from(stackDeploys).where(eq(stackDeploys.id, id)).get();

export const listStackDeploys = (db: Db, stackId: number): StackDeployRow[] =>
  db.select().from(stackDeploys).where(eq(stackDeploys.stackId, stackId)).orderBy(desc(stackDeploys.id)).all();

/** The deploy the reconciler works on: the running one, else the oldest pending. */
export function activeStackDeploy(db: Db, stackId: number): StackDeployRow | undefined {
  const open = db
    .select()
    .from(stackDeploys)
    .where(and(eq(stackDeploys.stackId, stackId), inArray(stackDeploys.status, ['pending', 'running'])))
    .orderBy(asc(stackDeploys.id))
    .all();
  return open.find((d) => d.status === 'running') ?? open[0];
}

export interface NewStackDeploy {
  stackId: number;
  trigger: StackDeployRow['trigger'];
  origin: StackDeployRow['origin'];
  steps: StackDeployStep[];
  composeSealed: string | null;
  configVersion: number;
}

/** Queues a stack deploy; a still-pending older one is superseded (only the newest intent matters). */
export function createStackDeploy(db: Db, input: NewStackDeploy): StackDeployRow {
  const now = nowIso();
  const superseded = db.select({ id: stackDeploys.id }).from(stackDeploys).where(and(eq(stackDeploys.stackId, input.stackId), eq(stackDeploys.status, 'pending'))).all();
  const row = db.insert(stackDeploys).values({ ...input, status: input.steps.length === 0 ? 'success' : 'pending', completedAt: input.steps.length === 0 ? now : null }).returning().get();
  for (const s of superseded) {
    db.update(stackDeploys).set({ status: 'cancelled', completedAt: now, error: `superseded by stack deploy ${row.id}` }).where(eq(stackDeploys.id, s.id)).run();
  }
  return row;
}

export function updateStackDeploy(db: Db, id: number, patch: Partial<Pick<StackDeployRow, 'status' | 'phase' | 'steps' | 'error' | 'startedAt' | 'completedAt'>>): void {
  db.update(stackDeploys).set(patch).where(eq(stackDeploys.id, id)).run();
}

// --- stack events (record) ---

export function addStackEvent(db: Db, e: { stackId: number; stackDeployId?: number | null; service?: string | null; message: string; level?: EventLevel }) {
  return db
    .insert(stackEvents)
    .values({ stackId: e.stackId, stackDeployId: e.stackDeployId ?? null, service: e.service ?? null, message: e.message, level: e.level ?? 'info', timestamp: nowIso() })
    .returning()
    .get();
}

export const listStackEvents = (db: Db, stackId: number, afterId = 0) =>
  db.select().from(stackEvents).where(eq(stackEvents.stackId, stackId)).orderBy(asc(stackEvents.id)).all().filter((e) => e.id > afterId);
