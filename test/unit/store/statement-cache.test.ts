import { describe, it, expect } from 'vitest';
import Database from 'better-sqlite3';
import { cacheStatements } from '../../../src/store/statement-cache.js';
import { memoryDb } from '../../support/db.js';
import { apps } from '../../../src/store/schema/index.js';

function cachedDb(max?: number) {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t (v) VALUES (\'a\'), (\'b\')');
  cacheStatements(db, max);
  return db;
}

describe('statement cache', () => {
  it('hands out the same compiled statement for the same text', () => {
    const db = cachedDb();
    const a = db.prepare('SELECT v FROM t WHERE id = ?');
    expect(db.prepare('SELECT v FROM t WHERE id = ?')).toBe(a);
    expect(db.prepare('SELECT id FROM t')).not.toBe(a);
  });

  it('a reused statement is back in its default mode, whatever the last user set', () => {
    const db = cachedDb();
    expect(db.prepare('SELECT id, v FROM t WHERE id = 1').raw().get()).toEqual([1, 'a']);
    expect(db.prepare('SELECT id, v FROM t WHERE id = 1').get()).toEqual({ id: 1, v: 'a' });
    expect(db.prepare('SELECT id, v FROM t WHERE id = 1').pluck().get()).toBe(1);
    expect(db.prepare('SELECT id, v FROM t WHERE id = 1').get()).toEqual({ id: 1, v: 'a' });
    // Writers have no modes to reset and run again as often as asked.
    db.prepare('INSERT INTO t (v) VALUES (?)').run('c');
    db.prepare('INSERT INTO t (v) VALUES (?)').run('d');
    expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(4);
  });

  it('a statement still being iterated is not handed out again', () => {
    const db = cachedDb();
    const sql = 'SELECT v FROM t ORDER BY id';
    const outer = db.prepare(sql);
    const seen: string[] = [];
    for (const row of outer.iterate() as Iterable<{ v: string }>) {
      const inner = db.prepare(sql);
      expect(inner).not.toBe(outer);
      seen.push(`${row.v}:${(inner.all() as { v: string }[]).map((r) => r.v).join('')}`);
    }
    expect(seen).toEqual(['a:ab', 'b:ab']);
  });

  it('keeps at most `max` texts, dropping the least recently used', () => {
    const db = cachedDb(2);
    const one = db.prepare('SELECT 1');
    const two = db.prepare('SELECT 2');
    expect(db.prepare('SELECT 1')).toBe(one); // 1 is now the most recent
    db.prepare('SELECT 3'); // evicts 2
    expect(db.prepare('SELECT 1')).toBe(one);
    expect(db.prepare('SELECT 2')).not.toBe(two);
  });

  it('drizzle through the cache: repeated and mixed-mode queries give the same results', () => {
    const db = memoryDb();
    db.insert(apps).values({ name: 'a', fallbackPort: 9000 }).run();
    for (let i = 0; i < 3; i++) {
      expect(db.select().from(apps).all().map((r) => r.name)).toEqual(['a']);
      expect(db.select({ n: apps.name }).from(apps).get()).toEqual({ n: 'a' });
      expect(db.$client.prepare('SELECT name FROM apps').all()).toEqual([{ name: 'a' }]);
    }
  });
});
