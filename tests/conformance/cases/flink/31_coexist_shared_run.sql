-- needs: postgres
-- Both producers report this job: openlineage-flink's listener with detached tracking derives its
-- run id from the Flink JobID and the job's start time (its REST API), and planlineage coexists.
-- The generator's 6 seconds keep the job's REST API up while the listener and the runner read it.
SET 'openlineage.flink.enableDetachedJobTracking' = 'true';
SET 'openlineage.job.namespace' = 'conformance-coexist';
SET 'pipeline.name' = 'orders-archive';
SET 'rest.port' = '{rest_port}';
SET 'rest.bind-port' = '{rest_port}';
CREATE TABLE gen (id INT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '60', 'rows-per-second' = '10');
CREATE TABLE pg_customers (id INT, name STRING) WITH ('connector' = 'jdbc', 'url' = '{pg}', 'table-name' = 'customers', 'username' = '{pg_user}', 'password' = '{pg_password}');
CREATE TABLE pg_archive (id INT, name STRING) WITH ('connector' = 'jdbc', 'url' = '{pg}', 'table-name' = 'customers_archive', 'username' = '{pg_user}', 'password' = '{pg_password}');
INSERT INTO pg_archive SELECT g.id, UPPER(c.name) FROM gen AS g JOIN pg_customers AS c ON g.id = c.id;
