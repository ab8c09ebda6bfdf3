package io.quarkiverse.mysqllock.runtime.lease;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.quarkiverse.mysqllock.runtime.engine.LockTimings;
import io.quarkiverse.mysqllock.runtime.table.LeaseStatements.Expected;
import io.quarkiverse.mysqllock.runtime.table.OwnerTokens;

/**
 * Observed expiry: what this instance saw of the leases other instances hold, so that it takes one over only after
 * seeing it unchanged for a whole lease on its own monotonic clock, whatever any server's clock says. A holder that
 * still renews changes its row's version (owner token and end), and the take is a compare-and-set on the version seen,
 * so no lease is taken from a live holder; only clock rates must be close, never their readings.
 * <p>
 * A version is first seen when a read that returned it came back: it was written before then, so its holder's lease,
 * counted from the moment its holder sent the statement that wrote it, ends (by the holder's own clock, less its loss
 * margin) before this instance's clock has run the lease's length past that moment. The length is the one the owner
 * token records. The observations are kept across attempts (a {@code tryAcquire} a minute later takes a dead holder's
 * lease), bounded in number: the least recently used are forgotten, which only makes their next take wait again.
 * <p>
 * Also kept: the tokens of this instance's own leases that ended here without their rows being given up for sure (lost,
 * or a release whose statement failed). Their holders were told, and this instance renews them no more, so its next
 * acquisition of the name takes such a row over at once.
 */
final class Observations {

    /** The most leases watched, and the most own rows remembered. */
    static final int CAPACITY = 10_000;

    /** A version of a lease row, seen unchanged since {@code seenAtNanos}. */
    private record Watch(String owner, long expiresMicros, long seenAtNanos) {
    }

    /** A token of this instance's whose row it may take over from {@code fromNanos} on. */
    private record Own(String token, long fromNanos) {
        boolean ripe(long now) {
            return now - fromNanos >= 0;
        }
    }

    private final Map<String, Watch> watched = bounded();
    private final Map<String, List<Own>> ownEnded = bounded();

    private static <V> Map<String, V> bounded() {
        return new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
                return size() > CAPACITY;
            }
        };
    }

    /**
     * A read of the name's row came back at {@code answeredAtNanos}, showing this owner (null: free) and end. An
     * unchanged version keeps the moment it was first seen.
     */
    synchronized void saw(String serverName, String owner, long expiresMicros, long answeredAtNanos) {
        List<Own> own = ownEnded.get(serverName);
        if (own != null && (owner == null || own.stream().noneMatch(mine -> mine.token.equals(owner)))) {
            ownEnded.remove(serverName); // given up since, or taken over
        }
        if (owner == null) {
            watched.remove(serverName);
            return;
        }
        Watch known = watched.get(serverName);
        if (known == null || !known.owner.equals(owner) || known.expiresMicros != expiresMicros) {
            watched.put(serverName, new Watch(owner, expiresMicros, answeredAtNanos));
        }
    }

    /**
     * A row of this instance's that nobody here counts on, perhaps still in its name under these tokens: a take that
     * may have committed unanswered (no one was told it holds it), or a lease whose release could not give it up. It
     * may be taken over at once.
     */
    synchronized void ended(String serverName, List<String> tokens) {
        ended(serverName, tokens, System.nanoTime());
    }

    /**
     * A lease of this instance's was lost here (its holder told) while its row may still be its: it may be taken over
     * from {@code fromNanos} on, the end of the lease as its holder counted it (it may have found its lease valid a
     * moment before it was told).
     */
    synchronized void ended(String serverName, List<String> tokens, long fromNanos) {
        List<Own> known = ownEnded.getOrDefault(serverName, List.of());
        List<Own> all = new ArrayList<>(known.size() + tokens.size());
        known.stream().filter(mine -> !tokens.contains(mine.token)).forEach(all::add);
        tokens.forEach(token -> all.add(new Own(token, fromNanos)));
        ownEnded.put(serverName, List.copyOf(all));
    }

    /** The row of this instance's lease with these tokens was given up, or found not to be ours. */
    synchronized void settled(String serverName, List<String> tokens) {
        List<Own> known = ownEnded.get(serverName);
        if (known != null) {
            List<Own> left = known.stream().filter(mine -> !tokens.contains(mine.token)).toList();
            if (left.isEmpty()) {
                ownEnded.remove(serverName);
            } else {
                ownEnded.put(serverName, left);
            }
        }
    }

    /** The name was taken here: what was known of its former versions no longer matters. */
    synchronized void taken(String serverName) {
        watched.remove(serverName);
        ownEnded.remove(serverName);
    }

    /**
     * What a take of this name may replace now besides a free or long-dead row: a row of this instance's that ended
     * here (from the moment its holder counted it ended), a version seen unchanged for its whole lease and margin, or a
     * version of an older holder that recorded no length (the old rule: once its end passed by the taking server's
     * clock); null if none.
     */
    synchronized Expected expected(String serverName, long now) {
        List<Own> own = ownEnded.get(serverName);
        List<String> ripe = own == null ? List.of()
                : own.stream().filter(mine -> mine.ripe(now)).map(Own::token).toList();
        if (!ripe.isEmpty()) {
            return Expected.own(ripe);
        }
        Watch watch = watched.get(serverName);
        if (watch == null) {
            return null;
        }
        long length = lengthNanos(watch.owner);
        if (length < 0) {
            return Expected.legacy(watch.owner);
        }
        return now - watch.seenAtNanos >= watchNanos(length) ? Expected.version(watch.owner, watch.expiresMicros) : null;
    }

    /**
     * How long until a row of this name may be taken over (a version seen, a row of this instance's); 0 if it may now,
     * -1 if none is known.
     */
    synchronized long ripeInNanos(String serverName, long now) {
        long ripeIn = -1;
        for (Own mine : ownEnded.getOrDefault(serverName, List.of())) {
            ripeIn = earlier(ripeIn, Math.max(0, mine.fromNanos - now));
        }
        Watch watch = watched.get(serverName);
        if (watch != null) {
            long length = lengthNanos(watch.owner);
            ripeIn = earlier(ripeIn, length < 0 ? 0 : Math.max(0, watchNanos(length) - (now - watch.seenAtNanos)));
        }
        return ripeIn;
    }

    /** The earlier of two waits, -1 standing for none. */
    private static long earlier(long wait, long other) {
        return wait < 0 ? other : Math.min(wait, other);
    }

    /**
     * How long a version recording this length must be seen unchanged: the length and its margin, saturated (a token may
     * record a length of centuries, whose sum with the margin would otherwise wrap into "long enough").
     */
    private static long watchNanos(long length) {
        long needed = length + LockTimings.watchMargin(length);
        return needed < 0 ? Long.MAX_VALUE : needed;
    }

    private static long lengthNanos(String owner) {
        long micros = OwnerTokens.lengthMicros(owner);
        return micros < 0 ? -1 : TimeUnit.MICROSECONDS.toNanos(micros);
    }

    /** How many versions of others' leases are watched: a measure of the bound for tests. */
    synchronized int watched() {
        return watched.size();
    }
}
