-- needs: postgres
-- A streaming aggregate upserted into a PostgreSQL table by its primary key.
CREATE TABLE gen (id INT, city STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '6', 'fields.city.length' = '1');
CREATE TABLE pg_counts (city STRING, n BIGINT, PRIMARY KEY (city) NOT ENFORCED) WITH ('connector' = 'jdbc', 'url' = '{pg}', 'table-name' = 'city_counts', 'username' = '{pg_user}', 'password' = '{pg_password}');
INSERT INTO pg_counts SELECT city, COUNT(*) FROM gen GROUP BY city;
