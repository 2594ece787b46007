CREATE TYPE "public"."job_status" AS ENUM('pending', 'running', 'waiting', 'retrying', 'succeeded', 'failed', 'cancelled');--> statement-breakpoint
CREATE TYPE "public"."step_effect" AS ENUM('none', 'idempotent', 'unsafe');--> statement-breakpoint
CREATE TYPE "public"."step_status" AS ENUM('pending', 'started', 'succeeded', 'failed', 'skipped');--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"principal_id" text NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"prefix" text NOT NULL,
	"hash" text NOT NULL,
	"scopes" text[],
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"last_used_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "audit_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"tenant_id" text NOT NULL,
	"principal_id" text NOT NULL,
	"client_name" text,
	"client_version" text,
	"action" text NOT NULL,
	"target_job_id" text,
	"args_digest" text,
	"args_redacted" jsonb,
	"outcome" text NOT NULL,
	"error_code" text,
	"request_id" text,
	"trace_id" text
);
--> statement-breakpoint
CREATE TABLE "job_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"job_id" text NOT NULL,
	"tenant_id" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"kind" text NOT NULL,
	"from_status" "job_status",
	"to_status" "job_status",
	"worker_id" text,
	"reason" text,
	"version" integer,
	"details" jsonb
);
--> statement-breakpoint
CREATE TABLE "job_steps" (
	"job_id" text NOT NULL,
	"step_name" text NOT NULL,
	"position" integer NOT NULL,
	"status" "step_status" DEFAULT 'pending' NOT NULL,
	"effect" "step_effect" NOT NULL,
	"attempt" integer DEFAULT 1 NOT NULL,
	"attempt_group" integer DEFAULT 1 NOT NULL,
	"idempotency_key" text NOT NULL,
	"params_digest" text,
	"output" jsonb,
	"output_sha256" text,
	"cursor" jsonb,
	"error" jsonb,
	"approval" jsonb,
	"lease_fence" integer NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "job_steps_job_id_step_name_pk" PRIMARY KEY("job_id","step_name")
);
--> statement-breakpoint
CREATE TABLE "job_tombstones" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"principal_id" text NOT NULL,
	"type" text NOT NULL,
	"status" "job_status" NOT NULL,
	"result_sha256" text,
	"result_summary" text,
	"error_code" text,
	"created_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone,
	"deleted_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "jobs" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"principal_id" text NOT NULL,
	"type" text NOT NULL,
	"input" jsonb NOT NULL,
	"idempotency_key" text,
	"idempotency_hash" text,
	"request_hash" text NOT NULL,
	"dispatch_id" text NOT NULL,
	"dedup_expires_at" timestamp with time zone NOT NULL,
	"status" "job_status" DEFAULT 'pending' NOT NULL,
	"version" integer DEFAULT 0 NOT NULL,
	"plan" jsonb NOT NULL,
	"current_step" text,
	"steps_done" integer DEFAULT 0 NOT NULL,
	"progress_done" double precision,
	"progress_total" double precision,
	"progress_message" text,
	"progress_updated_at" timestamp with time zone,
	"result" jsonb,
	"error" jsonb,
	"attempt" integer DEFAULT 1 NOT NULL,
	"max_attempts" integer NOT NULL,
	"attempt_group" integer DEFAULT 1 NOT NULL,
	"next_run_at" timestamp with time zone,
	"cancel_requested_at" timestamp with time zone,
	"cancel_reason" text,
	"waiting_reason" text,
	"waiting_details" jsonb,
	"resume_requested_at" timestamp with time zone,
	"waiting_expires_at" timestamp with time zone,
	"deadline_at" timestamp with time zone,
	"deadline_action" text,
	"lease_owner" text,
	"lease_fence" integer DEFAULT 0 NOT NULL,
	"lease_expires_at" timestamp with time zone,
	"trace_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"expires_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "principals" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"scopes" text[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"disabled_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_principal_id_principals_id_fk" FOREIGN KEY ("principal_id") REFERENCES "public"."principals"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "job_steps" ADD CONSTRAINT "job_steps_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_prefix_uq" ON "api_keys" USING btree ("prefix");--> statement-breakpoint
CREATE INDEX "audit_events_tenant_at_idx" ON "audit_events" USING btree ("tenant_id","at");--> statement-breakpoint
CREATE INDEX "audit_events_job_idx" ON "audit_events" USING btree ("target_job_id");--> statement-breakpoint
CREATE INDEX "job_events_job_idx" ON "job_events" USING btree ("job_id","id");--> statement-breakpoint
CREATE INDEX "job_tombstones_tenant_idx" ON "job_tombstones" USING btree ("tenant_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "jobs_tenant_idempotency_hash_uq" ON "jobs" USING btree ("tenant_id","idempotency_hash");--> statement-breakpoint
CREATE INDEX "jobs_tenant_created_idx" ON "jobs" USING btree ("tenant_id","id");--> statement-breakpoint
CREATE INDEX "jobs_tenant_running_idx" ON "jobs" USING btree ("tenant_id") WHERE "jobs"."status" = 'running';--> statement-breakpoint
CREATE INDEX "jobs_finished_idx" ON "jobs" USING btree ("finished_at") WHERE "jobs"."finished_at" is not null;--> statement-breakpoint
CREATE INDEX "jobs_active_idx" ON "jobs" USING btree ("status","next_run_at") WHERE "jobs"."status" in ('pending', 'running', 'waiting', 'retrying');--> statement-breakpoint
CREATE UNIQUE INDEX "principals_tenant_name_uq" ON "principals" USING btree ("tenant_id","name");