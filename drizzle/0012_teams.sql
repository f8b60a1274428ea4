CREATE TABLE `audit_log` (
	`id` integer PRIMARY KEY NOT NULL,
	`at` text NOT NULL,
	`user_id` integer,
	`username` text,
	`origin` text NOT NULL,
	`address` text,
	`action` text NOT NULL,
	`target` text,
	`fields` text NOT NULL,
	`status` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_log_at_idx` ON `audit_log` (`at`);--> statement-breakpoint
CREATE TABLE `invitations` (
	`id` integer PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`role` text NOT NULL,
	`apps` text,
	`created_by` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')) NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	`used_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invitations_token_hash_unique` ON `invitations` (`token_hash`);--> statement-breakpoint
CREATE TABLE `recovery_codes` (
	`id` integer PRIMARY KEY NOT NULL,
	`user_id` integer NOT NULL,
	`code_hash` text NOT NULL,
	`used_at` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `recovery_codes_user_idx` ON `recovery_codes` (`user_id`);--> statement-breakpoint
ALTER TABLE `api_tokens` ADD `scopes` text;--> statement-breakpoint
ALTER TABLE `api_tokens` ADD `expires_at` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `address` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `user_agent` text;--> statement-breakpoint
ALTER TABLE `users` ADD `role` text DEFAULT 'viewer' NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `apps` text;--> statement-breakpoint
ALTER TABLE `users` ADD `totp_secret_sealed` text;--> statement-breakpoint
ALTER TABLE `users` ADD `totp_enabled_at` text;