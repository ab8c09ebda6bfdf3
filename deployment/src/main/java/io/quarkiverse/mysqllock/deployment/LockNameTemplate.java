package io.quarkiverse.mysqllock.deployment;

import java.util.ArrayList;
import java.util.List;

/**
 * A parsed {@code @Locked} name template: literal text and {@code {parameter.property...}} placeholders.
 * {@code {{} and {@code }}} stand for literal braces.
 */
final class LockNameTemplate {

    /** Literal text, or a placeholder when {@code parameter} is set. */
    record Segment(String literal, String parameter, List<String> properties) {
        boolean isPlaceholder() {
            return parameter != null;
        }
    }

    private LockNameTemplate() {
    }

    /**
     * @throws IllegalArgumentException with what is wrong, for a template that does not parse
     */
    static List<Segment> parse(String template) {
        List<Segment> segments = new ArrayList<>();
        StringBuilder literal = new StringBuilder();
        for (int i = 0; i < template.length(); i++) {
            char c = template.charAt(i);
            if (c == '{' && i + 1 < template.length() && template.charAt(i + 1) == '{') {
                literal.append('{');
                i++;
            } else if (c == '}' && i + 1 < template.length() && template.charAt(i + 1) == '}') {
                literal.append('}');
                i++;
            } else if (c == '}') {
                throw new IllegalArgumentException("'}' at position " + i + " closes no placeholder (write '}}' for a"
                        + " literal brace)");
            } else if (c == '{') {
                int end = template.indexOf('}', i);
                if (end < 0) {
                    throw new IllegalArgumentException("'{' at position " + i + " is never closed (write '{{' for a"
                            + " literal brace)");
                }
                String expression = template.substring(i + 1, end).strip();
                if (!expression
                        .matches("[A-Za-z_$][A-Za-z0-9_$]*(\\.[A-Za-z_$][A-Za-z0-9_$]*)*|\\d+(\\.[A-Za-z_$][A-Za-z0-9_$]*)*")) {
                    throw new IllegalArgumentException("'{" + template.substring(i + 1, end) + "}' is not a parameter"
                            + " name or position followed by .properties");
                }
                if (!literal.isEmpty()) {
                    segments.add(new Segment(literal.toString(), null, List.of()));
                    literal.setLength(0);
                }
                String[] parts = expression.split("\\.");
                segments.add(new Segment(null, parts[0], List.of(parts).subList(1, parts.length)));
                i = end;
            } else {
                literal.append(c);
            }
        }
        if (!literal.isEmpty()) {
            segments.add(new Segment(literal.toString(), null, List.of()));
        }
        return segments;
    }
}
