-- needs: kafka
-- Two topics filled, then read as one table over a topic list.
CREATE TABLE gen (id INT, name STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
CREATE TABLE east (id INT, name STRING) WITH ('connector' = 'kafka', 'topic' = 'east', 'properties.bootstrap.servers' = '{kafka}', 'format' = 'json');
CREATE TABLE west (id INT, name STRING) WITH ('connector' = 'kafka', 'topic' = 'west', 'properties.bootstrap.servers' = '{kafka}', 'format' = 'json');
CREATE TABLE both_sides (id INT, name STRING) WITH ('connector' = 'kafka', 'topic' = 'east;west', 'properties.bootstrap.servers' = '{kafka}', 'format' = 'json', 'properties.group.id' = 'conformance', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE sides_files (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'file://{root}/data/sides_files', 'format' = 'json');
EXECUTE STATEMENT SET BEGIN
INSERT INTO east SELECT id, name FROM gen;
INSERT INTO west SELECT id, name FROM gen;
END;
INSERT INTO sides_files SELECT id, name FROM both_sides;
