-- needs: kafka
-- A streaming aggregate upserted into a compacted-style topic by key.
CREATE TABLE gen (id INT, city STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '6', 'fields.city.length' = '1');
CREATE TABLE city_counts (city STRING, n BIGINT, PRIMARY KEY (city) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', 'topic' = 'city_counts', 'properties.bootstrap.servers' = '{kafka}', 'key.format' = 'json', 'value.format' = 'json');
INSERT INTO city_counts SELECT city, COUNT(*) FROM gen GROUP BY city;
