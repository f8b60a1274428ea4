CREATE TABLE `node_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`node_id` text NOT NULL,
	`hostname` text NOT NULL,
	`kind` text NOT NULL,
	`state` text NOT NULL,
	`timestamp` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `node_events_node_idx` ON `node_events` (`node_id`,`id`);