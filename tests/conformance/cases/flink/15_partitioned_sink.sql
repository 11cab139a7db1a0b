-- A partitioned file table.
CREATE TABLE gen (id INT, name STRING, part STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '4', 'fields.part.length' = '1');
CREATE TABLE parted (id INT, name STRING, part STRING) PARTITIONED BY (part) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/parted', 'format' = 'csv');
INSERT INTO parted SELECT id, name, part FROM gen;
