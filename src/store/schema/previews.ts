import { sqliteTable, integer, text, uniqueIndex, index } from 'drizzle-orm/sqlite-core';
import { apps } from './apps.js';
import { createdAt } from './common.js';

/**
 * A pull-request preview (issue 20): the app `<parent>-pr-<number>` (`appId`, an ordinary app row) and what
 * it previews. Deleting the preview app deletes this row (cascade); deleting the parent goes through the
 * apps command, which deletes its preview apps first (their containers must be announced by name).
 */
export const previews = sqliteTable(
  'previews',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    appId: integer('app_id').notNull().references(() => apps.id, { onDelete: 'cascade' }),
    parentId: integer('parent_id').notNull().references(() => apps.id, { onDelete: 'cascade' }),
    prNumber: integer('pr_number').notNull(),
    headSha: text('head_sha').notNull(),
    headRef: text('head_ref').notNull(),
    /** The head is in another repository: the preview got none of the parent's secrets. */
    fork: integer('fork', { mode: 'boolean' }).notNull().default(false),
    /** When the last commit arrived (opened or synchronize): `ttl_days` counts from here. */
    lastCommitAt: text('last_commit_at').notNull(),
    /** The code host that sent the pull request (`github`, ...) and its base repository (`owner/name`): where reports go. */
    host: text('host').notNull().default('github'),
    repository: text('repository'),
    /** The pull-request comment svc posted (its id on the code host): updated, never posted twice. */
    commentId: text('comment_id'),
    /** What that comment says now (`<deploy id>:<status>`): a report is sent only when this changes. */
    reported: text('reported'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('previews_app_idx').on(t.appId), uniqueIndex('previews_parent_pr_idx').on(t.parentId, t.prNumber), index('previews_parent_idx').on(t.parentId)],
);

export type PreviewRow = typeof previews.$inferSelect;
