package io.quarkiverse.mysqllock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The {@code Lock-Fence} header: what is sent reads back as it was, and what is not a fence is refused, saying why. */
class LockFenceTest {

    @Test
    void aFenceReadsBackFromItsHeader() {
        for (String name : new String[] { "order:1001", "a b+c;d,e%f", "commande/été €", "~x" }) {
            LockFence fence = new LockFence(name, 42);
            String header = fence.headerValue();
            assertThat(header).as(name).startsWith("42; lock=");
            assertThat(header.substring("42; lock=".length())).as(name).isNotEmpty().doesNotContain(" ", ",", "+", ";");
            assertThat(LockFence.parse(header)).isEqualTo(fence);
        }
        assertThat(new LockFence("order:1001", 7).headerValue()).isEqualTo("7; lock=order%3A1001");
        assertThat(LockFence.parse(" 7 ;  lock=order%3a1001")).isEqualTo(new LockFence("order:1001", 7));
    }

    @Test
    void whatIsNotAFenceIsRefused() {
        assertThatThrownBy(() -> LockFence.parse("seven; lock=x")).hasMessageContaining("no number");
        assertThatThrownBy(() -> LockFence.parse("7")).hasMessageContaining("'<token>; lock=");
        assertThatThrownBy(() -> LockFence.parse("7; lock=a; lock=b")).hasMessageContaining("one lock per request");
        assertThatThrownBy(() -> LockFence.parse("7; lock=a, 8; lock=b")).hasMessageContaining("one lock per request");
        assertThatThrownBy(() -> LockFence.parse("7; lock=a,b")).hasMessageContaining("not percent-encoded");
        assertThatThrownBy(() -> LockFence.parse("7; lock=a+b")).hasMessageContaining("not percent-encoded");
        assertThatThrownBy(() -> LockFence.parse("7; lock=%C3")).hasMessageContaining("not UTF-8");
        assertThatThrownBy(() -> LockFence.parse("0; lock=a")).hasMessageContaining("positive");
        assertThatThrownBy(() -> LockFence.parse("7; lock=")).hasMessageContaining("needs the lock's name");
        assertThatThrownBy(() -> LockFence.parse(null)).hasMessageContaining("No Lock-Fence header");
    }
}
