-- needs: kafka
-- One topic filtered into another.
CREATE TABLE gen (id INT, amount DOUBLE) WITH ('connector' = 'datagen', 'number-of-rows' = '4');
CREATE TABLE payments (id INT, amount DOUBLE) WITH ('connector' = 'kafka', 'topic' = 'payments', 'properties.bootstrap.servers' = '{kafka}', 'format' = 'json', 'properties.group.id' = 'conformance', 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE big_payments (id INT, amount DOUBLE) WITH ('connector' = 'kafka', 'topic' = 'big_payments', 'properties.bootstrap.servers' = '{kafka}', 'format' = 'json');
INSERT INTO payments SELECT id, amount FROM gen;
INSERT INTO big_payments SELECT id, amount FROM payments WHERE amount > 0;
