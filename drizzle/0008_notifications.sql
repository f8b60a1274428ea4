CREATE TABLE `notify_alerts` (
	`key` text PRIMARY KEY NOT NULL,
	`open` integer NOT NULL,
	`last_sent_at` text,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `notify_channels` (
	`id` integer PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`events` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`target` text NOT NULL,
	`config_sealed` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `notify_channels_name_unique` ON `notify_channels` (`name`);--> statement-breakpoint
CREATE TABLE `notify_deliveries` (
	`id` integer PRIMARY KEY NOT NULL,
	`channel_id` integer NOT NULL,
	`outbox_id` integer,
	`event` text NOT NULL,
	`at` text NOT NULL,
	`ok` integer NOT NULL,
	`status` integer,
	`answer` text NOT NULL,
	`attempt` integer NOT NULL,
	FOREIGN KEY (`channel_id`) REFERENCES `notify_channels`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `notify_deliveries_channel_idx` ON `notify_deliveries` (`channel_id`,`id`);--> statement-breakpoint
CREATE TABLE `notify_outbox` (
	`id` integer PRIMARY KEY NOT NULL,
	`channel_id` integer NOT NULL,
	`message_id` text NOT NULL,
	`event` text NOT NULL,
	`subject` text NOT NULL,
	`message` text NOT NULL,
	`link` text,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`last_answer` text,
	`created_at` text NOT NULL,
	`delivered_at` text,
	FOREIGN KEY (`channel_id`) REFERENCES `notify_channels`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `notify_outbox_message_id_unique` ON `notify_outbox` (`message_id`);--> statement-breakpoint
CREATE INDEX `notify_outbox_due_idx` ON `notify_outbox` (`status`,`next_at`);