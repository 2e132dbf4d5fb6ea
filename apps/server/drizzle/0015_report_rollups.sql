CREATE TABLE "call_stats_dirty" (
	"project_id" text NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	"marked_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "call_stats_dirty_project_id_hour_pk" PRIMARY KEY("project_id","hour")
);
--> statement-breakpoint
CREATE TABLE "call_stats_histogram" (
	"project_id" text NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	"assistant_id" text DEFAULT '' NOT NULL,
	"assistant_version" integer DEFAULT 0 NOT NULL,
	"kind" text NOT NULL,
	"bucket" integer NOT NULL,
	"count" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "call_stats_histogram_project_id_hour_assistant_id_assistant_version_kind_bucket_pk" PRIMARY KEY("project_id","hour","assistant_id","assistant_version","kind","bucket")
);
--> statement-breakpoint
CREATE TABLE "call_stats_hourly" (
	"project_id" text NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	"direction" text NOT NULL,
	"assistant_id" text DEFAULT '' NOT NULL,
	"assistant_version" integer DEFAULT 0 NOT NULL,
	"line_number" text DEFAULT '' NOT NULL,
	"flow_id" text DEFAULT '' NOT NULL,
	"task_id" text DEFAULT '' NOT NULL,
	"calls" integer DEFAULT 0 NOT NULL,
	"answered" integer DEFAULT 0 NOT NULL,
	"assistant_answered" integer DEFAULT 0 NOT NULL,
	"transferred" integer DEFAULT 0 NOT NULL,
	"opt_out" integer DEFAULT 0 NOT NULL,
	"abandoned_ringing" integer DEFAULT 0 NOT NULL,
	"abandoned_flow" integer DEFAULT 0 NOT NULL,
	"over_limit" integer DEFAULT 0 NOT NULL,
	"rejected" integer DEFAULT 0 NOT NULL,
	"short_answered" integer DEFAULT 0 NOT NULL,
	"answered_within_3" integer DEFAULT 0 NOT NULL,
	"answered_within_5" integer DEFAULT 0 NOT NULL,
	"answered_within_10" integer DEFAULT 0 NOT NULL,
	"answered_within_20" integer DEFAULT 0 NOT NULL,
	"talk_seconds_sum" integer DEFAULT 0 NOT NULL,
	"talk_seconds_max" integer DEFAULT 0 NOT NULL,
	"wait_seconds_sum" integer DEFAULT 0 NOT NULL,
	"wait_seconds_max" integer DEFAULT 0 NOT NULL,
	"turns_sum" integer DEFAULT 0 NOT NULL,
	"grade_a" integer DEFAULT 0 NOT NULL,
	"grade_b" integer DEFAULT 0 NOT NULL,
	"grade_c" integer DEFAULT 0 NOT NULL,
	"grade_d" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "call_stats_hourly_project_id_hour_direction_assistant_id_assistant_version_line_number_flow_id_task_id_pk" PRIMARY KEY("project_id","hour","direction","assistant_id","assistant_version","line_number","flow_id","task_id")
);
--> statement-breakpoint
CREATE TABLE "knowledge_gaps" (
	"project_id" text NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	"call_id" text NOT NULL,
	"turn_index" integer NOT NULL,
	"knowledge_base_id" text NOT NULL,
	"question" text NOT NULL,
	"best_segment_id" text,
	"best_score" real,
	"asked_at" timestamp with time zone NOT NULL,
	CONSTRAINT "knowledge_gaps_call_id_turn_index_knowledge_base_id_pk" PRIMARY KEY("call_id","turn_index","knowledge_base_id")
);
--> statement-breakpoint
CREATE TABLE "knowledge_stats_hourly" (
	"project_id" text NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	"knowledge_base_id" text NOT NULL,
	"questions" integer DEFAULT 0 NOT NULL,
	"hits" integer DEFAULT 0 NOT NULL,
	"no_answer" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "knowledge_stats_hourly_project_id_hour_knowledge_base_id_pk" PRIMARY KEY("project_id","hour","knowledge_base_id")
);
--> statement-breakpoint
ALTER TABLE "call_stats_dirty" ADD CONSTRAINT "call_stats_dirty_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "call_stats_histogram" ADD CONSTRAINT "call_stats_histogram_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "call_stats_hourly" ADD CONSTRAINT "call_stats_hourly_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "knowledge_gaps" ADD CONSTRAINT "knowledge_gaps_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "knowledge_gaps" ADD CONSTRAINT "knowledge_gaps_call_id_calls_id_fk" FOREIGN KEY ("call_id") REFERENCES "public"."calls"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "knowledge_stats_hourly" ADD CONSTRAINT "knowledge_stats_hourly_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "knowledge_gaps_project_idx" ON "knowledge_gaps" USING btree ("project_id","asked_at");