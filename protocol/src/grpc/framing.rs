//! gRPC message framing ("Length-Prefixed-Message", gRPC over HTTP/2): a 1-byte compressed flag,
//! a 4-byte big-endian length, then the protobuf bytes. Only uncompressed frames are produced or
//! accepted (no `grpc-encoding` is negotiated).
//!
//! Built for a hand-rolled server that injects faults: [`encode_frame`] writes header and message
//! into one buffer, and [`FrameDecoder`] hands out complete frames as zero-copy [`Bytes`] slices
//! of its buffer, checking the declared length against the limit before buffering the body.
//!
//! ```
//! use a2a_protocol::grpc::{framing::{encode_frame, FrameDecoder}, pb};
//! let req = pb::GetTaskRequest { id: "t-1".into(), ..Default::default() };
//! let wire = encode_frame(&req);
//! let mut dec = FrameDecoder::new(1 << 20);
//! dec.push(&wire[..3]);
//! assert!(dec.next_message::<pb::GetTaskRequest>().unwrap().is_none());
//! dec.push(&wire[3..]);
//! assert_eq!(dec.next_message::<pb::GetTaskRequest>().unwrap(), Some(req));
//! assert!(dec.finish().is_ok());
//! ```

use bytes::{Buf, BufMut, Bytes, BytesMut};

/// Length of the frame header: compressed flag + 4-byte length.
pub const FRAME_HEADER_LEN: usize = 5;
/// tonic's default limit for a decoded message (4 MiB).
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 4 * 1024 * 1024;

/// A frame could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// The compressed flag is 1, but no compression was negotiated.
    #[error("compressed gRPC frame, but no grpc-encoding was negotiated")]
    Compressed,
    /// The compressed flag is neither 0 nor 1.
    #[error("invalid gRPC frame flag {0:#04x}")]
    InvalidFlag(u8),
    /// The declared message length exceeds the limit.
    #[error("gRPC message of {len} bytes exceeds the limit of {max} bytes")]
    TooLarge {
        /// Declared length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The input ended inside a frame.
    #[error("truncated gRPC frame: {buffered} bytes buffered, {needed} needed")]
    Truncated {
        /// Bytes of the incomplete frame received.
        buffered: usize,
        /// Bytes the frame needs (header, or header + declared length).
        needed: usize,
    },
    /// The frame body is not a valid protobuf encoding of the expected message.
    #[error("undecodable protobuf message: {0}")]
    Decode(#[from] prost::DecodeError),
}

/// Frame one message: header and encoding in a single allocation.
pub fn encode_frame(message: &impl prost::Message) -> Bytes {
    let mut buf = BytesMut::with_capacity(FRAME_HEADER_LEN + message.encoded_len());
    encode_frame_into(message, &mut buf);
    buf.freeze()
}

/// Append one framed message to `buf` (reserving what it needs).
///
/// # Panics
///
/// If the encoded message is longer than `u32::MAX` bytes, which gRPC cannot frame.
pub fn encode_frame_into(message: &impl prost::Message, buf: &mut BytesMut) {
    let len = message.encoded_len();
    buf.reserve(FRAME_HEADER_LEN + len);
    buf.put_u8(0);
    buf.put_u32(u32::try_from(len).expect("gRPC messages are limited to 4 GiB"));
    // `reserve` above guarantees the capacity, so encoding cannot fail.
    let _ = message.encode(buf);
}

/// Frame raw bytes as given (e.g. a deliberately broken body), with a chosen flag byte.
pub fn encode_raw_frame(flag: u8, body: &[u8], buf: &mut BytesMut) {
    buf.reserve(FRAME_HEADER_LEN + body.len());
    buf.put_u8(flag);
    // Truncates bodies over 4 GiB, which no test needs; the flag and body are the caller's.
    buf.put_u32(body.len() as u32);
    buf.put_slice(body);
}

/// An incremental decoder: push bytes as they arrive, take complete frames out.
#[derive(Debug)]
pub struct FrameDecoder {
    buf: BytesMut,
    max: usize,
}

impl FrameDecoder {
    /// A decoder that rejects frames whose declared length exceeds `max_message_size`.
    pub fn new(max_message_size: usize) -> Self {
        FrameDecoder {
            buf: BytesMut::new(),
            max: max_message_size,
        }
    }

    /// Append received bytes.
    pub fn push(&mut self, chunk: &[u8]) {
        self.buf.extend_from_slice(chunk);
    }

    /// Bytes buffered and not yet returned as frames.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The body of the next complete frame (a zero-copy slice), `None` if more bytes are needed.
    /// The header is validated as soon as its 5 bytes are in, before the body arrives.
    pub fn next_frame(&mut self) -> Result<Option<Bytes>, FrameError> {
        let Some(len) = self.peek_header()? else {
            return Ok(None);
        };
        if self.buf.len() < FRAME_HEADER_LEN + len {
            return Ok(None);
        }
        self.buf.advance(FRAME_HEADER_LEN);
        Ok(Some(self.buf.split_to(len).freeze()))
    }

    /// The next complete frame decoded as `M`, `None` if more bytes are needed.
    pub fn next_message<M: prost::Message + Default>(&mut self) -> Result<Option<M>, FrameError> {
        match self.next_frame()? {
            Some(body) => Ok(Some(M::decode(body)?)),
            None => Ok(None),
        }
    }

    /// End of input: an error if a partial frame is left.
    pub fn finish(&self) -> Result<(), FrameError> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let needed = match self.peek_header() {
            Ok(Some(len)) => FRAME_HEADER_LEN + len,
            _ => FRAME_HEADER_LEN,
        };
        Err(FrameError::Truncated {
            buffered: self.buf.len(),
            needed,
        })
    }

    fn peek_header(&self) -> Result<Option<usize>, FrameError> {
        parse_header(&self.buf, self.max)
    }
}

/// Decode every frame of a complete body (e.g. a unary request) as `M`, without copying it.
pub fn decode_frames<M: prost::Message + Default>(
    mut body: Bytes,
    max_message_size: usize,
) -> Result<Vec<M>, FrameError> {
    let mut out = Vec::new();
    while !body.is_empty() {
        let len = parse_header(&body, max_message_size)?.ok_or(FrameError::Truncated {
            buffered: body.len(),
            needed: FRAME_HEADER_LEN,
        })?;
        if body.len() < FRAME_HEADER_LEN + len {
            return Err(FrameError::Truncated {
                buffered: body.len(),
                needed: FRAME_HEADER_LEN + len,
            });
        }
        body.advance(FRAME_HEADER_LEN);
        out.push(M::decode(body.split_to(len))?);
    }
    Ok(out)
}

/// The declared length of the frame starting at `buf[0]`, `None` if the header is incomplete.
fn parse_header(buf: &[u8], max: usize) -> Result<Option<usize>, FrameError> {
    let Some(h) = buf.get(..FRAME_HEADER_LEN) else {
        return Ok(None);
    };
    match h[0] {
        0 => {}
        1 => return Err(FrameError::Compressed),
        f => return Err(FrameError::InvalidFlag(f)),
    }
    let len = u32::from_be_bytes([h[1], h[2], h[3], h[4]]) as usize;
    if len > max {
        return Err(FrameError::TooLarge { len, max });
    }
    Ok(Some(len))
}
