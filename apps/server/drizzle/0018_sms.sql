CREATE TABLE "sms_batches" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"signature_id" text NOT NULL,
	"template_id" text NOT NULL,
	"file_name" text DEFAULT '' NOT NULL,
	"total" integer DEFAULT 0 NOT NULL,
	"accepted" integer DEFAULT 0 NOT NULL,
	"rejected" integer DEFAULT 0 NOT NULL,
	"rejects" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sms_follow_up_rules" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"owner_type" text NOT NULL,
	"owner_id" text NOT NULL,
	"trigger" text NOT NULL,
	"grades" text[] DEFAULT '{}' NOT NULL,
	"signature_id" text NOT NULL,
	"template_id" text NOT NULL,
	"variable_map" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sms_messages" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"phone" text NOT NULL,
	"signature_id" text,
	"signature_name" text NOT NULL,
	"template_id" text,
	"template_name" text NOT NULL,
	"template_type" text NOT NULL,
	"variables" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"content" text NOT NULL,
	"parts" integer DEFAULT 1 NOT NULL,
	"provider" text NOT NULL,
	"provider_message_id" text,
	"status" text DEFAULT 'queued' NOT NULL,
	"error_code" text,
	"error_message" text,
	"timeline" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"send_after" timestamp with time zone DEFAULT now() NOT NULL,
	"lease_until" timestamp with time zone,
	"source" text NOT NULL,
	"call_id" text,
	"task_id" text,
	"batch_id" text,
	"rule_id" text,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"submitted_at" timestamp with time zone,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "sms_opt_outs" (
	"project_id" text NOT NULL,
	"phone" text NOT NULL,
	"source" text NOT NULL,
	"reply" text DEFAULT '' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sms_opt_outs_project_id_phone_pk" PRIMARY KEY("project_id","phone")
);
--> statement-breakpoint
CREATE TABLE "sms_replies" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"phone" text NOT NULL,
	"content" text NOT NULL,
	"provider" text NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sms_settings" (
	"project_id" text PRIMARY KEY NOT NULL,
	"provider" text DEFAULT 'outbox' NOT NULL,
	"credentials_encrypted" text DEFAULT '' NOT NULL,
	"provider_settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"daily_cap_per_number" integer DEFAULT 5 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sms_signatures" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"source" text NOT NULL,
	"remark" text DEFAULT '' NOT NULL,
	"proof_path" text,
	"proof_name" text,
	"status" text DEFAULT 'draft' NOT NULL,
	"reject_reason" text,
	"provider" text,
	"provider_ref" text,
	"submitted_at" timestamp with time zone,
	"reviewed_at" timestamp with time zone,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sms_templates" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"content" text NOT NULL,
	"variables" text[] DEFAULT '{}' NOT NULL,
	"remark" text DEFAULT '' NOT NULL,
	"status" text DEFAULT 'draft' NOT NULL,
	"reject_reason" text,
	"provider" text,
	"provider_ref" text,
	"submitted_at" timestamp with time zone,
	"reviewed_at" timestamp with time zone,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "sms_batches" ADD CONSTRAINT "sms_batches_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sms_batches" ADD CONSTRAINT "sms_batches_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sms_follow_up_rules" ADD CONSTRAINT "sms_follow_up_rules_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sms_messages" ADD CONSTRAINT "sms_messages_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sms_messages" ADD CONSTRAINT "sms_messages_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sms_opt_outs" ADD CONSTRAINT "sms_opt_outs_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sms_replies" ADD CONSTRAINT "sms_replies_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sms_settings" ADD CONSTRAINT "sms_settings_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sms_signatures" ADD CONSTRAINT "sms_signatures_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sms_signatures" ADD CONSTRAINT "sms_signatures_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sms_templates" ADD CONSTRAINT "sms_templates_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sms_templates" ADD CONSTRAINT "sms_templates_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sms_batches_project_idx" ON "sms_batches" USING btree ("project_id","created_at");--> statement-breakpoint
CREATE INDEX "sms_follow_up_rules_owner_idx" ON "sms_follow_up_rules" USING btree ("project_id","owner_type","owner_id");--> statement-breakpoint
CREATE INDEX "sms_messages_project_created_idx" ON "sms_messages" USING btree ("project_id","created_at","id");--> statement-breakpoint
CREATE INDEX "sms_messages_project_phone_idx" ON "sms_messages" USING btree ("project_id","phone","created_at");--> statement-breakpoint
CREATE INDEX "sms_messages_provider_id_idx" ON "sms_messages" USING btree ("provider","provider_message_id");--> statement-breakpoint
CREATE INDEX "sms_messages_due_idx" ON "sms_messages" USING btree ("send_after") WHERE "sms_messages"."status" in ('queued', 'waiting');--> statement-breakpoint
CREATE INDEX "sms_messages_call_idx" ON "sms_messages" USING btree ("call_id");--> statement-breakpoint
CREATE INDEX "sms_replies_project_idx" ON "sms_replies" USING btree ("project_id","received_at");--> statement-breakpoint
CREATE UNIQUE INDEX "sms_signatures_project_name_idx" ON "sms_signatures" USING btree ("project_id","name");--> statement-breakpoint
CREATE INDEX "sms_templates_project_idx" ON "sms_templates" USING btree ("project_id","created_at");