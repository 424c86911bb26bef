//! Unit tests of the SSE framing and its bounds.

use super::*;

fn decode(chunks: &[&[u8]]) -> (Vec<String>, Option<String>) {
    let mut decoder = SseDecoder::new();
    let mut out = Vec::new();
    for chunk in chunks {
        decoder.push(chunk);
        while let Some(event) = decoder.next_event().unwrap() {
            out.push(format!("{:?}|{}|{:?}", event.event, event.data, event.id));
        }
    }
    let tail = decoder.finish().unwrap();
    (out, tail.pending.map(|e| e.data.to_string()))
}

#[test]
fn bom_split_across_pushes_is_dropped() {
    let (events, _) = decode(&[b"\xEF", b"\xBB", b"\xBFdata: a\n\n"]);
    assert_eq!(events, ["None|a|None"]);
}

#[test]
fn a_bom_only_counts_at_the_start() {
    let (events, _) = decode(&[b"data: a\n\n\xEF\xBB\xBFdata: b\n\n"]);
    assert_eq!(events, ["None|a|None"]);
}

#[test]
fn cr_at_a_chunk_boundary_then_lf_is_one_line_end() {
    let (events, _) = decode(&[b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]);
    assert_eq!(events, ["None|a\nb|None"]);
}

#[test]
fn comments_and_blank_lines_do_not_dispatch() {
    let (events, tail) = decode(&[b": keep-alive\n\n\n: x\n\ndata: a\n\n"]);
    assert_eq!(events, ["None|a|None"]);
    assert_eq!(tail, None);
}

#[test]
fn fields_without_colon_and_unknown_fields() {
    let (events, _) = decode(&[b"data\nfoo: bar\ndata: x\n\n"]);
    assert_eq!(events, ["None|\nx|None"]);
}

#[test]
fn retry_and_id_rules() {
    let mut decoder = SseDecoder::new();
    decoder.push(b"retry: 1500\nid: 7\ndata: a\n\nretry: x\nid: a\0b\ndata: b\n\n");
    let first = decoder
        .next_event()
        .unwrap()
        .map(|e| (e.retry, e.id.map(String::from)));
    assert_eq!(first, Some((Some(1500), Some("7".to_string()))));
    let second = decoder
        .next_event()
        .unwrap()
        .map(|e| (e.retry, e.id.map(String::from)));
    assert_eq!(second, Some((None, Some("7".to_string()))));
}

#[test]
fn invalid_utf8_is_replaced_not_fatal() {
    let (events, _) = decode(&[b"data: \xFF\xFEok\n\n"]);
    assert_eq!(events, ["None|\u{FFFD}\u{FFFD}ok|None"]);
}

#[test]
fn the_tail_reports_an_unterminated_event() {
    let (events, pending) = decode(&[b"data: a\n\ndata: [DONE]\n"]);
    assert_eq!(events, ["None|a|None"]);
    assert_eq!(pending.as_deref(), Some("[DONE]"));
    let (_, pending) = decode(&[b"data: a\n\ndata: [DO"]);
    assert_eq!(pending.as_deref(), Some("[DO"));
    let mut decoder = SseDecoder::new();
    decoder.push(b"data: a\n\n");
    while decoder.next_event().unwrap().is_some() {}
    assert!(decoder.finish().unwrap().is_clean());
}

#[test]
fn a_long_line_in_one_byte_pushes() {
    let line = format!("data: {}\n\n", "x".repeat(10_000));
    let mut decoder = SseDecoder::new();
    let mut seen = 0;
    for byte in line.as_bytes() {
        decoder.push(std::slice::from_ref(byte));
        while let Some(event) = decoder.next_event().unwrap() {
            seen = event.data.len();
        }
    }
    assert_eq!(seen, 10_000);
}

/// Pushes `chunk` `times` times, draining events after each push as its `Framing` impl
/// does; returns the first error and the most memory the decoder held after any push.
fn push_repeatedly(
    decoder: &mut SseDecoder,
    chunk: &[u8],
    times: usize,
) -> (Option<SseError>, usize) {
    let mut peak = 0;
    for _ in 0..times {
        decoder.push(chunk);
        loop {
            match decoder.next_event() {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(error) => return (Some(error), peak),
            }
        }
        peak = peak.max(decoder.buffered());
    }
    (None, peak)
}

#[test]
fn an_endless_line_is_refused_once_it_passes_the_bound() {
    const CHUNK: usize = 64 << 10;
    let mut decoder = SseDecoder::new();
    decoder.push(b"data: ");
    let x = vec![b'x'; CHUNK];
    let (error, peak) = push_repeatedly(&mut decoder, &x, (MAX_LINE + 2 * CHUNK) / CHUNK);
    assert_eq!(error, Some(SseError::LineTooLong));
    // The line so far and the push that broke the bound; no spare room reserved on top.
    assert!(peak <= MAX_LINE + 2 + CHUNK, "{peak}");
    assert_eq!(decoder.buffered(), 0, "the buffer is given back");
    assert_eq!(decoder.next_event(), Err(SseError::LineTooLong), "sticky");
    assert_eq!(decoder.finish().err(), Some(SseError::LineTooLong));
    decoder.push(b"\n\n");
    assert_eq!(decoder.buffered(), 0, "nothing is read after the error");
}

#[test]
fn a_line_just_under_the_bound_is_fine_and_one_just_over_is_not() {
    let decode_line = |len: usize| {
        let mut decoder = SseDecoder::new();
        let mut line = b"data:".to_vec();
        line.resize(len, b'x');
        line.extend_from_slice(b"\n\n");
        decoder.push(&line);
        decoder.next_event().map(|e| e.map(|e| e.data.len()))
    };
    assert_eq!(decode_line(MAX_LINE), Ok(Some(MAX_LINE - 5)));
    assert_eq!(decode_line(MAX_LINE + 1), Err(SseError::LineTooLong));
}

#[test]
fn an_endless_event_of_short_data_lines_is_refused() {
    let mut decoder = SseDecoder::new();
    let line = b"data: 0123456789abcdef0123456789abcdef\n";
    let lines = line.repeat(1024);
    // Each line adds its value and the line break joining it to the next.
    let pushes = MAX_EVENT_DATA / (1024 * (line.len() - b"data: ".len())) + 1;
    let (error, peak) = push_repeatedly(&mut decoder, &lines, pushes);
    assert_eq!(error, Some(SseError::EventTooLarge));
    assert!(peak <= MAX_EVENT_DATA + 2 * lines.len(), "{peak}");
}

#[test]
fn an_event_cut_off_at_the_end_still_respects_the_bound() {
    let line = |len: usize| {
        let mut line = b"data:".to_vec();
        line.resize(len, b'x');
        line
    };
    let mut decoder = SseDecoder::new();
    decoder.push(&line(MAX_EVENT_DATA * 3 / 4));
    decoder.push(b"\n");
    assert_eq!(decoder.next_event(), Ok(None));
    // The last line has no line break: it only joins the event in `finish`.
    decoder.push(&line(MAX_EVENT_DATA / 2));
    assert_eq!(decoder.next_event(), Ok(None));
    assert_eq!(decoder.finish().err(), Some(SseError::EventTooLarge));
}

#[test]
fn keep_alives_do_not_grow_the_buffers() {
    let mut chunk = Vec::new();
    while chunk.len() < 16 << 10 {
        chunk.extend_from_slice(b": keep-alive\n\n\r\nevent: ping\n\nretry: 10\nid: 1\n\n");
    }
    let times = (50 << 20) / chunk.len();
    let mut decoder = SseDecoder::new();
    let (error, peak) = push_repeatedly(&mut decoder, &chunk, times);
    assert_eq!(error, None);
    assert!(peak <= 2 * chunk.len(), "{peak}");
}
