-- Tables named with catalog and database.
CREATE TABLE default_catalog.default_database.gen (id INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '4');
CREATE TABLE default_catalog.default_database.qualified (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/qualified', 'format' = 'csv');
INSERT INTO default_catalog.default_database.qualified SELECT id, name FROM default_catalog.default_database.gen;
