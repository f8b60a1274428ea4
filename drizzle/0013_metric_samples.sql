CREATE TABLE `metric_samples` (
	`subject` text NOT NULL,
	`tier` integer NOT NULL,
	`ts` integer NOT NULL,
	`samples` integer DEFAULT 1 NOT NULL,
	`cpu` real,
	`memory_bytes` real,
	`memory_limit_bytes` real,
	`net_rx_bps` real,
	`net_tx_bps` real,
	`block_read_bps` real,
	`block_write_bps` real,
	`containers` integer,
	`disk_used_bytes` real,
	`disk_total_bytes` real,
	PRIMARY KEY(`subject`, `tier`, `ts`)
);
--> statement-breakpoint
CREATE INDEX `metric_samples_age_idx` ON `metric_samples` (`tier`,`ts`);