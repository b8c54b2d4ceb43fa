-- The insert side of the protocol_users / protocol_stats and address_stats / stat_counters triggers (0004) in
-- one pass per key instead of two. 0004 first inserted the new keys with ON CONFLICT DO NOTHING (to count those
-- it created) and then upserted the counts; here the counts are upserted once and a key counts as created when
-- its count after the upsert is exactly what this statement added: a kept key always has a count of at least
-- one, because the delete side removes keys whose count falls to zero. The delete side is unchanged.
CREATE OR REPLACE FUNCTION protocol_stats_count_transactions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    INSERT INTO protocol_users AS u (protocol, address, transaction_count)
      SELECT protocol, from_address, -count(*) FROM protocol_stats_old_rows
      GROUP BY protocol, from_address ORDER BY protocol, from_address
    ON CONFLICT (protocol, address) DO UPDATE SET transaction_count = u.transaction_count + excluded.transaction_count;
    WITH gone AS (
      DELETE FROM protocol_users AS u USING (SELECT DISTINCT protocol, from_address FROM protocol_stats_old_rows) o
      WHERE u.protocol = o.protocol AND u.address = o.from_address AND u.transaction_count <= 0
      RETURNING u.protocol
    )
    INSERT INTO protocol_stats AS s (protocol, transaction_count, unique_users, updated_at)
      SELECT r.protocol, -r.n, -coalesce(g.n, 0), now()
      FROM (SELECT protocol, count(*) AS n FROM protocol_stats_old_rows GROUP BY protocol) r
      LEFT JOIN (SELECT protocol, count(*) AS n FROM gone GROUP BY protocol) g USING (protocol)
      ORDER BY r.protocol
    ON CONFLICT (protocol) DO UPDATE SET transaction_count = s.transaction_count + excluded.transaction_count,
      unique_users = s.unique_users + excluded.unique_users, updated_at = excluded.updated_at;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    WITH added AS (
      SELECT protocol, from_address AS address, count(*) AS n FROM protocol_stats_new_rows GROUP BY protocol, from_address
    ), upserted AS (
      INSERT INTO protocol_users AS u (protocol, address, transaction_count)
        SELECT protocol, address, n FROM added ORDER BY protocol, address
      ON CONFLICT (protocol, address) DO UPDATE SET transaction_count = u.transaction_count + excluded.transaction_count
      RETURNING u.protocol, u.address, u.transaction_count
    )
    INSERT INTO protocol_stats AS s (protocol, transaction_count, unique_users, updated_at)
      SELECT a.protocol, sum(a.n)::bigint, count(*) FILTER (WHERE up.transaction_count = a.n), now()
      FROM added a JOIN upserted up USING (protocol, address)
      GROUP BY a.protocol ORDER BY a.protocol
    ON CONFLICT (protocol) DO UPDATE SET transaction_count = s.transaction_count + excluded.transaction_count,
      unique_users = s.unique_users + excluded.unique_users, updated_at = excluded.updated_at;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION address_stats_count_parties() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    INSERT INTO address_stats AS a (address, transaction_count)
      SELECT address, -count(*) FROM address_stats_old_rows GROUP BY address ORDER BY address
    ON CONFLICT (address) DO UPDATE SET transaction_count = a.transaction_count + excluded.transaction_count;
    WITH gone AS (
      DELETE FROM address_stats AS a USING (SELECT DISTINCT address FROM address_stats_old_rows) o
      WHERE a.address = o.address AND a.transaction_count <= 0
      RETURNING a.address
    )
    INSERT INTO stat_counters AS c (name, value) SELECT 'addresses', -count(*) FROM gone
    ON CONFLICT (name) DO UPDATE SET value = c.value + excluded.value;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    WITH added AS (
      SELECT address, count(*) AS n FROM address_stats_new_rows GROUP BY address
    ), upserted AS (
      INSERT INTO address_stats AS a (address, transaction_count)
        SELECT address, n FROM added ORDER BY address
      ON CONFLICT (address) DO UPDATE SET transaction_count = a.transaction_count + excluded.transaction_count
      RETURNING a.address, a.transaction_count
    )
    INSERT INTO stat_counters AS c (name, value)
      SELECT 'addresses', count(*) FROM added a JOIN upserted up USING (address) WHERE up.transaction_count = a.n
    ON CONFLICT (name) DO UPDATE SET value = c.value + excluded.value;
  END IF;
  RETURN NULL;
END
$$;
