package io.quarkiverse.mysqllock;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * A lock's fencing token as it travels to another service: over HTTP in the {@value #HEADER} header,
 * {@code Lock-Fence: 42; lock=order%3A1001} (the token, then the lock's name percent-encoded in UTF-8: every byte but
 * letters, digits and {@code -._~} as {@code %XX}), in a message's header as the same text. The receiving service admits it
 * with {@link FenceGuard} ({@link Fenced} on a REST method).
 *
 * @param lock the lock's name, as its holder asked for it
 * @param token the holder's fencing token ({@link LockHandle#fencingToken()}), positive
 */
public record LockFence(String lock, long token) {

    /** The HTTP header that carries it. */
    public static final String HEADER = "Lock-Fence";

    public LockFence {
        if (lock == null || lock.isEmpty()) {
            throw new IllegalArgumentException("A lock fence needs the lock's name");
        }
        if (token <= 0) {
            throw new IllegalArgumentException("A fencing token is positive; " + token + " is none (lock '" + lock + "')");
        }
    }

    /** The fence of a lock held now: its name and fencing token (issued now if it was not yet). */
    public static LockFence of(LockHandle held) {
        return new LockFence(held.name(), held.fencingToken());
    }

    /**
     * The fence of the innermost {@code @Locked} method the calling thread is in ({@link LockManager#currentLock()}), if
     * {@code locks} took its lock.
     */
    public static Optional<LockFence> current(LockManager locks) {
        return locks.currentLock().map(LockFence::of);
    }

    /** The header's value: {@code <token>; lock=<name, percent-encoded>}. */
    public String headerValue() {
        StringBuilder value = new StringBuilder().append(token).append("; lock=");
        for (byte b : lock.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_'
                    || c == '~') {
                value.append((char) c);
            } else {
                value.append('%').append(HEX.charAt(c >> 4)).append(HEX.charAt(c & 0xf));
            }
        }
        return value.toString();
    }

    /**
     * Reads a header's value ({@link #headerValue()}).
     *
     * @throws IllegalArgumentException saying what is wrong with it
     */
    public static LockFence parse(String headerValue) {
        if (headerValue == null) {
            throw new IllegalArgumentException("No " + HEADER + " header");
        }
        String[] parts = headerValue.split(";", -1);
        if (parts.length != 2 || !parts[1].strip().startsWith("lock=")) {
            throw new IllegalArgumentException(HEADER + " header '" + headerValue + "' is not '<token>; lock=<name,"
                    + " percent-encoded>' (one lock per request)");
        }
        long token;
        try {
            token = Long.parseLong(parts[0].strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(HEADER + " header '" + headerValue + "' has no number as its token");
        }
        return new LockFence(decode(parts[1].strip().substring("lock=".length()), headerValue), token);
    }

    private static final String HEX = "0123456789ABCDEF";

    /** Strict percent-decoding: unreserved characters as they are, everything else as {@code %XX}; UTF-8. */
    private static String decode(String encoded, String headerValue) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (int i = 0; i < encoded.length(); i++) {
            char c = encoded.charAt(i);
            if (c == '%' && i + 2 < encoded.length() && Character.digit(encoded.charAt(i + 1), 16) >= 0
                    && Character.digit(encoded.charAt(i + 2), 16) >= 0) {
                bytes.write(Character.digit(encoded.charAt(i + 1), 16) * 16 + Character.digit(encoded.charAt(i + 2), 16));
                i += 2;
            } else if (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.'
                    || c == '_' || c == '~') {
                bytes.write(c);
            } else {
                throw new IllegalArgumentException(HEADER + " header '" + headerValue + "': the lock's name is not"
                        + " percent-encoded ('" + c + "' at position " + i + " of it)");
            }
        }
        CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder();
        try {
            return utf8.decode(ByteBuffer.wrap(bytes.toByteArray())).toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException(HEADER + " header '" + headerValue + "': the lock's name is not UTF-8");
        }
    }
}
