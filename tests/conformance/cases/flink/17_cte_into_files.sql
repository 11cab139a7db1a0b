-- A WITH clause between source and sink.
CREATE TABLE gen (id INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '4');
CREATE TABLE from_cte (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/from_cte', 'format' = 'csv');
INSERT INTO from_cte WITH picked AS (SELECT id, name FROM gen WHERE id IS NOT NULL) SELECT id, lower(name) FROM picked;
