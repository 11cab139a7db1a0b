-- INSERT OVERWRITE of a static partition of a partitioned path table.
CREATE TABLE facts (id INT, day STRING) USING parquet PARTITIONED BY (day) LOCATION '{root}/data/facts';
CREATE TABLE staging (id INT) USING parquet LOCATION '{root}/data/staging';
INSERT INTO staging VALUES (1), (2);
INSERT OVERWRITE TABLE facts PARTITION (day = '2026-12-01') SELECT id FROM staging;
