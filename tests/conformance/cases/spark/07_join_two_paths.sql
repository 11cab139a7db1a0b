-- One sink fed by a join of two tables at paths.
CREATE TABLE users (id INT, name STRING) USING parquet LOCATION '{root}/data/users';
CREATE TABLE visits (user_id INT, page STRING) USING parquet LOCATION '{root}/data/visits';
CREATE TABLE report (name STRING, page STRING) USING parquet LOCATION '{root}/data/report';
INSERT INTO users VALUES (1, 'ann');
INSERT INTO visits VALUES (1, '/home');
INSERT INTO report SELECT u.name, v.page FROM users u JOIN visits v ON u.id = v.user_id;
