CREATE TABLE "knowledge_segment_hits_hourly" (
	"project_id" text NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	"knowledge_base_id" text NOT NULL,
	"segment_id" text NOT NULL,
	"hits" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "knowledge_segment_hits_hourly_project_id_hour_knowledge_base_id_segment_id_pk" PRIMARY KEY("project_id","hour","knowledge_base_id","segment_id")
);
--> statement-breakpoint
ALTER TABLE "knowledge_segment_hits_hourly" ADD CONSTRAINT "knowledge_segment_hits_hourly_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "calls_project_regraded_idx" ON "calls" USING btree ("project_id","started_at") WHERE "calls"."human_grade" is not null;