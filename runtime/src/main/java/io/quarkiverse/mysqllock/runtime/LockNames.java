package io.quarkiverse.mysqllock.runtime;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Pattern;

import io.quarkiverse.mysqllock.LockOptions;
import io.quarkiverse.mysqllock.runtime.engine.LockName;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest.Owner;
import io.quarkiverse.mysqllock.runtime.engine.LockRequest.WhenBusy;
import io.quarkiverse.mysqllock.runtime.jobs.JobClaims;
import io.quarkus.runtime.BlockingOperationControl;

/**
 * Turns the names applications use into names the server accepts and compares the same way on MySQL and MariaDB.
 * <p>
 * MySQL allows 64 characters and compares names case-insensitively; MariaDB allows 192 bytes and compares them
 * case- and trailing-space-sensitively. Lock names here are case-sensitive, as Java strings are: a name is sent as it is
 * only when it is at most 64 characters of printable ASCII without upper-case letters, leading or trailing spaces or
 * {@value #HASH_MARK}. Every other name becomes a readable lower-case prefix, {@value #HASH_MARK} and 16 hex digits of
 * the SHA-256 of the exact name. Names sent as they are never contain {@value #HASH_MARK}, so the two forms cannot
 * collide, and no server name contains an upper-case letter, so case-insensitive servers compare them exactly.
 * <p>
 * Also what a name and its options become on the way to the engine: {@link #request} checks both and builds the
 * engine's request, the one way every acquisition of a manager takes.
 */
public final class LockNames {

    /** MySQL's limit, the stricter of the two servers. */
    public static final int MAX_SERVER_NAME = 64;
    static final char HASH_MARK = '~';
    private static final int HASH_HEX_DIGITS = 16;
    private static final int MAX_NAMESPACE = 32;
    private static final Pattern NAMESPACE = Pattern.compile("[A-Za-z0-9_.:-]{1," + MAX_NAMESPACE + "}");

    /**
     * The lock table rows where scheduled {@code @Locked} methods record their ticks are named {@code tick@<lock name>}
     * ({@link JobClaims}): no lock may have a name that begins so, or it would share a job's row.
     */
    public static final String TICK_ROW_PREFIX = JobClaims.ROW_PREFIX;

    private final String prefix;

    private LockNames(String prefix) {
        this.prefix = prefix;
    }

    /**
     * @param namespace the configured namespace, or null
     * @throws IllegalArgumentException if the namespace has characters other than letters, digits and {@code _ - . :}
     *         or is longer than 32 characters
     */
    public static LockNames withNamespace(String namespace) {
        if (namespace == null) {
            return new LockNames("");
        }
        if (!NAMESPACE.matcher(namespace).matches()) {
            throw new IllegalArgumentException("quarkus.mysql-lock.namespace='" + namespace
                    + "' is not valid: use 1 to " + MAX_NAMESPACE + " letters, digits or _ - . : characters");
        }
        return new LockNames(namespace + ":");
    }

    /**
     * Checks a lock name as an application passed it: every way of naming a lock (the API, {@code @Locked} names
     * resolved at run time, semaphores, read-write locks, elections, {@code asLock}, the administration methods) comes
     * through here.
     *
     * @throws IllegalArgumentException if it is null or blank, or begins with {@value #TICK_ROW_PREFIX}, which names
     *         the rows of scheduled jobs' ticks
     */
    public static String requireValid(String name) {
        if (name == null) {
            throw new IllegalArgumentException("Lock name must not be null");
        }
        if (name.isBlank()) {
            throw new IllegalArgumentException("Lock name must not be blank, got '" + name + "'");
        }
        if (name.startsWith(TICK_ROW_PREFIX)) {
            throw new IllegalArgumentException("Lock name '" + name + "' is reserved: names beginning with '"
                    + TICK_ROW_PREFIX + "' are the lock table rows where scheduled @Locked methods record their ticks"
                    + " (row " + TICK_ROW_PREFIX + "<lock name>), and a lock of that name would share a job's row: its"
                    + " late ticks could be skipped and the lock's holders told of losses that did not happen. Choose"
                    + " another name");
        }
        return name;
    }

    /** An application's lock name with the name used on the server. */
    public LockName resolve(String name) {
        return new LockName(name, serverName(name));
    }

    /** The name used on the server (and as the lock table's key) for an application's lock name. */
    public String serverName(String name) {
        return toServer(prefix + requireValid(name));
    }

    /**
     * The lock table row of the ticks of the scheduled job whose lock is {@code name}: {@code tick@<name>}, named on
     * the server as a lock of that name would be (so every version of the extension agrees on it), and a name no lock
     * may take ({@link #requireValid}).
     */
    public String tickRow(String name) {
        return toServer(prefix + TICK_ROW_PREFIX + requireValid(name));
    }

    private static String toServer(String full) {
        if (isSentAsIs(full)) {
            return full;
        }
        String hash = sha256Hex(full).substring(0, HASH_HEX_DIGITS);
        String readable = readablePrefix(full, MAX_SERVER_NAME - HASH_HEX_DIGITS - 1);
        return readable + HASH_MARK + hash;
    }

    /**
     * The application's name for a name found on the server: without this instance's namespace, or as it is for a
     * hashed name (the hash cannot be undone); empty for a name outside the namespace.
     */
    public java.util.Optional<String> fromServer(String serverName) {
        if (serverName.indexOf(HASH_MARK) >= 0) {
            // a hashed name begins with the full name in lower case: so does a namespace with upper-case letters
            return serverName.startsWith(prefix.toLowerCase(Locale.ROOT)) ? java.util.Optional.of(serverName)
                    : java.util.Optional.empty();
        }
        return serverName.startsWith(prefix) ? java.util.Optional.of(serverName.substring(prefix.length()))
                : java.util.Optional.empty();
    }

    /**
     * The lock table row of a record kept about a lock ({@code kind}: what it records), not a lock's own row: reserved
     * as the fleet's rows are, starting with {@code ~}, which no lock's server name does (names sent as they are have no
     * {@code ~}, hashed names begin with their readable prefix, where {@code ~} became {@code _}). Its name's server name
     * follows the kind, cut and hashed to fit when too long.
     */
    public String recordRow(String kind, String name) {
        String prefix = "~" + kind + ":";
        String serverName = serverName(name);
        if (prefix.length() + serverName.length() <= MAX_SERVER_NAME) {
            return prefix + serverName;
        }
        return prefix + readablePrefix(serverName, MAX_SERVER_NAME - prefix.length() - HASH_HEX_DIGITS - 1) + HASH_MARK
                + sha256Hex(serverName).substring(0, HASH_HEX_DIGITS);
    }

    static boolean isSentAsIs(String name) {
        int length = name.length();
        if (length > MAX_SERVER_NAME || name.charAt(0) == ' ' || name.charAt(length - 1) == ' ') {
            return false;
        }
        for (int i = 0; i < length; i++) {
            char c = name.charAt(i);
            if (c < 0x20 || c > 0x7e || (c >= 'A' && c <= 'Z') || c == HASH_MARK) {
                return false;
            }
        }
        return true;
    }

    private static String readablePrefix(String name, int max) {
        StringBuilder out = new StringBuilder(max);
        for (int i = 0; i < name.length() && out.length() < max; i++) {
            char c = name.charAt(i);
            if (c >= 'A' && c <= 'Z') {
                out.append((char) (c + ('a' - 'A')));
            } else if (c < 0x20 || c > 0x7e || c == HASH_MARK) {
                out.append('_');
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static String sha256Hex(String value) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
            StringBuilder hex = new StringBuilder(digest.length * 2);
            for (byte b : digest) {
                hex.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
            }
            return hex.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }

    // --- requests ---

    /** Longer waits are cut to this; it keeps deadline arithmetic far from overflow. */
    static final Duration MAX_WAIT = Duration.ofDays(365);

    /**
     * The one request builder of a manager: every acquisition of a name, from the API or from {@code @Locked}, is
     * checked and turned into the engine's {@link LockRequest} here, with the same defaults for all. Checks the name and
     * the options (the wait, {@code defaultWait} when they have none), refuses to block an event loop, and says what
     * the engine is asked. A blocking
     * caller ({@code method} named, for messages) owns its hold and nests as its options say; an asynchronous one
     * ({@code method} null) acquires on a worker thread that owns nothing.
     */
    LockRequest request(String method, String name, LockOptions options, WhenBusy whenBusy, Duration defaultWait) {
        LockName lock = resolve(name);
        LockOptions checked = checked(options);
        long waitNanos = waitNanos(checked.waitTime().orElse(defaultWait));
        if (method != null) {
            checkBlockingAllowed(method);
        }
        Owner owner = method != null && checked.nesting() ? Owner.CALLING_THREAD : Owner.NONE;
        return LockRequest.of(lock, waitNanos).whenBusy(whenBusy).ownedBy(owner).atMostFor(checked.atMostFor());
    }

    /** The options of a plain wait ({@code null} refused with the wait's own message). */
    static LockOptions waiting(Duration wait) {
        waitNanos(wait);
        return LockOptions.waitingUpTo(wait);
    }

    static LockOptions checked(LockOptions options) {
        if (options == null) {
            throw new IllegalArgumentException("Lock options must not be null; use LockOptions.defaults()");
        }
        return options;
    }

    static void requireAction(String method, Object action) {
        if (action == null) {
            throw new IllegalArgumentException(method + " action must not be null");
        }
    }

    static long waitNanos(Duration wait) {
        if (wait == null) {
            throw new IllegalArgumentException("Lock wait must not be null; use Duration.ZERO for a single attempt");
        }
        if (wait.isNegative()) {
            throw new IllegalArgumentException("Lock wait must not be negative, got " + wait);
        }
        return (wait.compareTo(MAX_WAIT) > 0 ? MAX_WAIT : wait).toNanos();
    }

    static void checkBlockingAllowed(String method) {
        if (!BlockingOperationControl.isBlockingAllowed()) {
            throw new IllegalStateException("LockManager." + method + " blocks on the database and was called on an"
                    + " event-loop thread (" + Thread.currentThread().getName() + "). Use acquireAsync, or run the"
                    + " code on a worker thread (@Blocking, @RunOnVirtualThread)");
        }
    }
}
