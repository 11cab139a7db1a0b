-- needs: kafka
-- A topic written with CSV values and metadata columns read back.
CREATE TABLE gen (id INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
CREATE TABLE events (id INT, name STRING, part INT METADATA FROM 'partition' VIRTUAL) WITH ('connector' = 'kafka', 'topic' = 'events', 'properties.bootstrap.servers' = '{kafka}', 'value.format' = 'csv', 'properties.group.id' = 'conformance', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE events_files (id INT, name STRING, part INT) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/events_files', 'format' = 'csv');
INSERT INTO events SELECT id, name FROM gen;
INSERT INTO events_files SELECT id, name, part FROM events;
