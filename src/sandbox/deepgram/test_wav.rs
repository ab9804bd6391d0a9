//! A WAV written by hand for the tests, independently of the simulator's own writer
//! (`audio::wav_header`), so a reader and writer bug cannot cancel out.

/// `seconds` of 16-bit PCM at `rate`, interleaved; channel `c` holds a tone of 440 × (c + 1) Hz.
pub fn tone_wav(seconds: f64, rate: u32, channels: u16) -> Vec<u8> {
    let frames = (seconds * f64::from(rate)).round() as u32;
    let data_len = frames * u32::from(channels) * 2;
    let mut out = Vec::with_capacity(44 + data_len as usize);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data_len).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&channels.to_le_bytes());
    out.extend_from_slice(&rate.to_le_bytes());
    out.extend_from_slice(&(rate * u32::from(channels) * 2).to_le_bytes());
    out.extend_from_slice(&(channels * 2).to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_len.to_le_bytes());
    for i in 0..frames {
        let t = f64::from(i) / f64::from(rate);
        for c in 0..channels {
            let hz = 440.0 * f64::from(c + 1);
            out.extend_from_slice(&(((t * hz * std::f64::consts::TAU).sin() * 8000.0) as i16).to_le_bytes());
        }
    }
    out
}
