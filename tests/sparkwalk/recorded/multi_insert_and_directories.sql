-- Multi-inserts, WITH before INSERT OVERWRITE DIRECTORY, date and key=value folders, a SET of
-- openlineage-spark's setting: Spark 3.5.9's answer for it is recorded beside this file.
SET spark.openlineage.dataset.disabledTrimmers=io.openlineage.client.dataset.partition.trimmer.DateTrimmer;
CREATE TABLE src (id INT, name STRING) USING parquet LOCATION 's3a://lake/src';
CREATE TABLE ids (id INT) USING parquet LOCATION 's3a://lake/ids';
CREATE TABLE names (name STRING) USING parquet LOCATION 's3a://lake/names';
FROM src INSERT INTO ids SELECT id WHERE id > 1 INSERT INTO names SELECT upper(name);
WITH recent AS (SELECT id, name FROM src WHERE id > 0)
INSERT OVERWRITE DIRECTORY 's3a://lake/export/recent' USING csv SELECT * FROM recent;
WITH kept AS (SELECT id, name FROM src)
FROM kept INSERT INTO ids SELECT id INSERT OVERWRITE DIRECTORY 's3a://lake/export/names/dt=2024-03-01' USING json SELECT name;
CREATE TABLE daily (id INT) USING parquet LOCATION 's3a://lake/daily';
INSERT INTO daily
SELECT id FROM parquet.`s3a://lake/landing/metrics/2024-03-01`
UNION ALL SELECT id FROM parquet.`s3a://lake/landing/metrics/2024-03-02`
UNION ALL SELECT id FROM parquet.`s3a://lake/landing/metrics/2024/03/03`;
FROM src INSERT OVERWRITE DIRECTORY 's3a://lake/export/ids/2024/03/01' USING parquet SELECT id
INSERT INTO names SELECT lower(name);
