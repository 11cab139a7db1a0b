-- Date and key=value folders: openlineage-spark (1.39.0+) cuts them off a dataset's name, so
-- the days of landing/metrics are one dataset, read or written.
CREATE TABLE daily (id INT, v INT) USING parquet LOCATION '{root}/data/daily';
CREATE TABLE events (id INT) USING parquet LOCATION '{root}/data/events';
INSERT OVERWRITE DIRECTORY '{root}/landing/metrics/2024-03-01' USING parquet SELECT 1 AS id, 10 AS v;
INSERT OVERWRITE DIRECTORY '{root}/landing/metrics/2024-03-02' USING parquet SELECT 2 AS id, 20 AS v;
INSERT OVERWRITE DIRECTORY '{root}/landing/events/dt=2024-03-01' USING parquet SELECT 3 AS id;
INSERT OVERWRITE DIRECTORY '{root}/landing/archive/2024/03/01' USING parquet SELECT 4 AS id;
INSERT INTO daily
SELECT id, v FROM parquet.`{root}/landing/metrics/2024-03-01`
UNION ALL SELECT id, v FROM parquet.`{root}/landing/metrics/2024-03-02`;
INSERT INTO events
SELECT id FROM parquet.`{root}/landing/events/dt=2024-03-01`
UNION ALL SELECT id FROM parquet.`{root}/landing/archive/2024/03/01`;
