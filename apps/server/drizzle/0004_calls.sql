CREATE TABLE "call_turns" (
	"call_id" text NOT NULL,
	"index" integer NOT NULL,
	"speaker" text NOT NULL,
	"text" text NOT NULL,
	"dtmf" text,
	"start_ms" integer NOT NULL,
	"end_ms" integer NOT NULL,
	"interrupted" boolean DEFAULT false NOT NULL,
	"latency" jsonb,
	"segments" jsonb DEFAULT '[]'::jsonb NOT NULL,
	CONSTRAINT "call_turns_call_id_index_pk" PRIMARY KEY("call_id","index")
);
--> statement-breakpoint
CREATE TABLE "calls" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"direction" text NOT NULL,
	"caller_number" text NOT NULL,
	"callee_number" text NOT NULL,
	"task_id" text,
	"task_name" text,
	"contact_id" text,
	"contact_name" text,
	"assistant_id" text,
	"assistant_name" text DEFAULT '' NOT NULL,
	"assistant_version" integer,
	"status" text NOT NULL,
	"end_reason" text,
	"hangup_by" text,
	"persona" text,
	"started_at" timestamp with time zone NOT NULL,
	"answered_at" timestamp with time zone,
	"ended_at" timestamp with time zone,
	"talk_seconds" integer DEFAULT 0 NOT NULL,
	"turn_count" integer DEFAULT 0 NOT NULL,
	"machine_grade" text,
	"human_grade" text,
	"intent_grade" text,
	"human_graded_by" text,
	"human_graded_at" timestamp with time zone,
	"grade_reason" text DEFAULT '' NOT NULL,
	"analysis_by" text,
	"summary" text DEFAULT '' NOT NULL,
	"fields" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"tags" text[] DEFAULT '{}' NOT NULL,
	"variables" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"transfer_number" text,
	"transferred_at" timestamp with time zone,
	"recording" text DEFAULT 'none' NOT NULL,
	"recording_key" text,
	"recording_duration_ms" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "call_turns" ADD CONSTRAINT "call_turns_call_id_calls_id_fk" FOREIGN KEY ("call_id") REFERENCES "public"."calls"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "calls" ADD CONSTRAINT "calls_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "calls" ADD CONSTRAINT "calls_assistant_id_assistants_id_fk" FOREIGN KEY ("assistant_id") REFERENCES "public"."assistants"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "calls" ADD CONSTRAINT "calls_human_graded_by_users_id_fk" FOREIGN KEY ("human_graded_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "calls_project_started_idx" ON "calls" USING btree ("project_id","started_at");--> statement-breakpoint
CREATE INDEX "calls_project_reason_started_idx" ON "calls" USING btree ("project_id","end_reason","started_at");--> statement-breakpoint
CREATE INDEX "calls_project_grade_started_idx" ON "calls" USING btree ("project_id","intent_grade","started_at");--> statement-breakpoint
CREATE INDEX "calls_task_idx" ON "calls" USING btree ("task_id");--> statement-breakpoint
CREATE INDEX "calls_recording_pending_idx" ON "calls" USING btree ("recording");