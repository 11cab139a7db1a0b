-- Two writes to two targets: each pairs with its own sources only.
CREATE TABLE s1 (id INT) USING parquet LOCATION '{root}/data/s1';
CREATE TABLE s2 (id INT) USING parquet LOCATION '{root}/data/s2';
CREATE TABLE t1 (id INT) USING parquet LOCATION '{root}/data/t1';
CREATE TABLE t2 (id INT) USING parquet LOCATION '{root}/data/t2';
INSERT INTO s1 VALUES (1);
INSERT INTO s2 VALUES (2);
INSERT INTO t1 SELECT id FROM s1;
INSERT INTO t2 SELECT id FROM s2;
