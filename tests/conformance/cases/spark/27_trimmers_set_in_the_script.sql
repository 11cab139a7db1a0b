-- A SET of openlineage-spark's setting in the script: the listener read its settings from the
-- application's conf when it started, so the date folder is still cut off.
SET spark.openlineage.dataset.disabledTrimmers=io.openlineage.client.dataset.partition.trimmer.DateTrimmer;
CREATE TABLE daily (id INT) USING parquet LOCATION '{root}/data/daily';
INSERT OVERWRITE DIRECTORY '{root}/landing/metrics/2024-03-01' USING parquet SELECT 1 AS id;
INSERT INTO daily SELECT id FROM parquet.`{root}/landing/metrics/2024-03-01`;
