-- needs: kafka
-- Generated rows written to a Kafka topic, then the topic read back (a bounded scan) into files.
CREATE TABLE gen (id INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '4');
CREATE TABLE orders (id INT, name STRING) WITH ('connector' = 'kafka', 'topic' = 'orders', 'properties.bootstrap.servers' = '{kafka}', 'format' = 'json', 'properties.group.id' = 'conformance', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE orders_files (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/orders_files', 'format' = 'csv');
INSERT INTO orders SELECT id, name FROM gen;
INSERT INTO orders_files SELECT id, name FROM orders;
