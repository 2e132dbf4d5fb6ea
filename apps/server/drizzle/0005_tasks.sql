CREATE TABLE "call_tasks" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"state" text DEFAULT 'draft' NOT NULL,
	"assistant_id" text,
	"assistant_name" text DEFAULT '' NOT NULL,
	"assistant_version" integer,
	"settings" jsonb NOT NULL,
	"created_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "project_numbers" (
	"project_id" text NOT NULL,
	"number" text NOT NULL,
	"label" text DEFAULT '' NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "project_numbers_project_id_number_pk" PRIMARY KEY("project_id","number")
);
--> statement-breakpoint
CREATE TABLE "task_contacts" (
	"id" text PRIMARY KEY NOT NULL,
	"task_id" text NOT NULL,
	"project_id" text NOT NULL,
	"phone" text NOT NULL,
	"name" text DEFAULT '' NOT NULL,
	"variables" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"row_number" integer,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"lease_owner" text,
	"lease_until" timestamp with time zone,
	"last_call_id" text,
	"last_end_reason" text,
	"skip_reason" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "task_import_rejects" (
	"import_id" text NOT NULL,
	"task_id" text NOT NULL,
	"row_number" integer NOT NULL,
	"kind" text NOT NULL,
	"phone" text NOT NULL,
	"name" text DEFAULT '' NOT NULL,
	"raw" text DEFAULT '' NOT NULL,
	CONSTRAINT "task_import_rejects_import_id_row_number_pk" PRIMARY KEY("import_id","row_number")
);
--> statement-breakpoint
CREATE TABLE "task_imports" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"task_id" text NOT NULL,
	"file_name" text NOT NULL,
	"content" "bytea" NOT NULL,
	"committed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "call_tasks" ADD CONSTRAINT "call_tasks_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "call_tasks" ADD CONSTRAINT "call_tasks_assistant_id_assistants_id_fk" FOREIGN KEY ("assistant_id") REFERENCES "public"."assistants"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "call_tasks" ADD CONSTRAINT "call_tasks_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "project_numbers" ADD CONSTRAINT "project_numbers_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_contacts" ADD CONSTRAINT "task_contacts_task_id_call_tasks_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."call_tasks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_contacts" ADD CONSTRAINT "task_contacts_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_import_rejects" ADD CONSTRAINT "task_import_rejects_import_id_task_imports_id_fk" FOREIGN KEY ("import_id") REFERENCES "public"."task_imports"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_import_rejects" ADD CONSTRAINT "task_import_rejects_task_id_call_tasks_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."call_tasks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_imports" ADD CONSTRAINT "task_imports_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_imports" ADD CONSTRAINT "task_imports_task_id_call_tasks_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."call_tasks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "call_tasks_project_idx" ON "call_tasks" USING btree ("project_id","created_at");--> statement-breakpoint
CREATE INDEX "call_tasks_state_idx" ON "call_tasks" USING btree ("state");--> statement-breakpoint
CREATE UNIQUE INDEX "task_contacts_task_phone_idx" ON "task_contacts" USING btree ("task_id","phone");--> statement-breakpoint
CREATE INDEX "task_contacts_due_idx" ON "task_contacts" USING btree ("task_id","status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "task_contacts_lease_idx" ON "task_contacts" USING btree ("status","lease_until");--> statement-breakpoint
CREATE INDEX "task_import_rejects_task_idx" ON "task_import_rejects" USING btree ("task_id");