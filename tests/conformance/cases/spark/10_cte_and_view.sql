-- A query view and a CTE between the sources and the sink.
CREATE TABLE items (id INT, price DOUBLE) USING parquet LOCATION '{root}/data/items';
CREATE TABLE pricey (id INT) USING parquet LOCATION '{root}/data/pricey';
INSERT INTO items VALUES (1, 100.0), (2, 1.0);
CREATE TEMPORARY VIEW expensive AS SELECT id FROM items WHERE price > 10;
INSERT INTO pricey WITH e AS (SELECT id FROM expensive) SELECT id FROM e;
