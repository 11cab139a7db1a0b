-- The application's conf turns two of the trimmers off: their folders stay in the names.
-- conf: spark.openlineage.dataset.disabledTrimmers = io.openlineage.client.dataset.partition.trimmer.DateTrimmer;io.openlineage.client.dataset.partition.trimmer.KeyValueTrimmer
CREATE TABLE daily (id INT) USING parquet LOCATION '{root}/data/daily';
INSERT OVERWRITE DIRECTORY '{root}/landing/metrics/2024-03-01' USING parquet SELECT 1 AS id;
INSERT OVERWRITE DIRECTORY '{root}/landing/events/dt=2024-03-01' USING parquet SELECT 2 AS id;
INSERT OVERWRITE DIRECTORY '{root}/landing/months/202403' USING parquet SELECT 3 AS id;
INSERT INTO daily
SELECT id FROM parquet.`{root}/landing/metrics/2024-03-01`
UNION ALL SELECT id FROM parquet.`{root}/landing/events/dt=2024-03-01`
UNION ALL SELECT id FROM parquet.`{root}/landing/months/202403`;
