ALTER TABLE `apps` ADD `replicas` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `apps` ADD `memory_mb` integer;--> statement-breakpoint
ALTER TABLE `apps` ADD `cpus` real;